package cli

import "syscall"

type syscallStatfs = syscall.Statfs_t

func statfs(path string, st *syscallStatfs) error { return syscall.Statfs(path, st) }
