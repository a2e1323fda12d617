package server

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The built-in config profiles, compiled into the binary: profiles/<engine>/<name>.conf
// (PostgreSQL) and .cnf (MariaDB). The repository's top-level profiles/ is a symlink to
// this directory, so `--profiles-dir profiles` in a checkout names the same files.
//
//go:embed profiles
var builtinProfiles embed.FS

// BuiltinProfiles is how dbperf names where the built-in profiles come from.
const BuiltinProfiles = "built into dbperf"

// profileExts are the file extensions of config profiles.
func profileExts() []string { return []string{".conf", ".cnf"} }

// Profile is one config profile dbperf can start an engine's server with.
type Profile struct {
	Name string
	// Path is the file in the profiles directory, or "" for a built-in profile (or a
	// built-in one that a file of the same name overrides: then Path is that file).
	Path string
}

// Source says where the profile comes from: its file, or BuiltinProfiles.
func (p Profile) Source() string {
	if p.Path == "" {
		return BuiltinProfiles
	}
	return p.Path
}

// profileNames lists the profile names among dir entries (regular files named *.conf or
// *.cnf) and the file each name comes from (.conf before .cnf).
func profileNames(ents []fs.DirEntry) map[string]string {
	out := map[string]string{}
	for _, ext := range profileExts() {
		for _, e := range ents {
			if name, ok := strings.CutSuffix(e.Name(), ext); ok && name != "" && e.Type().IsRegular() {
				if _, seen := out[name]; !seen {
					out[name] = e.Name()
				}
			}
		}
	}
	return out
}

// checkProfilesDir fails when a profiles directory was named but is not one.
func checkProfilesDir(profilesDir string) error {
	if profilesDir == "" {
		return nil
	}
	st, err := os.Stat(profilesDir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("profiles directory %s (--profiles-dir or $DBPERF_PROFILES) does not exist", profilesDir)
	}
	if err != nil {
		return fmt.Errorf("profiles directory (--profiles-dir or $DBPERF_PROFILES): %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("profiles directory (--profiles-dir or $DBPERF_PROFILES) %s is not a directory", profilesDir)
	}
	return nil
}

// ListProfiles lists the config profiles available for engine, sorted by name: the
// built-in ones, and those in <profilesDir>/<engine>/ (when profilesDir is not ""), a file
// there overriding the built-in profile of its name.
func ListProfiles(profilesDir, engine string) ([]Profile, error) {
	ents, err := builtinProfiles.ReadDir("profiles/" + engine)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s profiles: %w", engine, err)
	}
	byName := map[string]Profile{}
	for name := range profileNames(ents) {
		byName[name] = Profile{Name: name}
	}
	if err := checkProfilesDir(profilesDir); err != nil {
		return nil, err
	}
	if profilesDir != "" {
		dir := filepath.Join(profilesDir, engine)
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s profiles in %s: %w", engine, dir, err)
		}
		for name, file := range profileNames(ents) {
			byName[name] = Profile{Name: name, Path: filepath.Join(dir, file)}
		}
	}
	out := make([]Profile, 0, len(byName))
	for _, p := range byName {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Profiles lists the names of the config profiles available for engine (ListProfiles).
func Profiles(profilesDir, engine string) ([]string, error) {
	ps, err := ListProfiles(profilesDir, engine)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names, nil
}

// ReadProfile returns the text of the profile name of engine and where it came from:
// <profilesDir>/<engine>/<name>.conf (or .cnf) when profilesDir is not "" and has it, else
// the built-in profile of that name. An unknown name is an error listing the available
// profiles.
func ReadProfile(profilesDir, engine, name string) (string, Profile, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", Profile{}, fmt.Errorf("%s: invalid profile name %q", engine, name)
	}
	if err := checkProfilesDir(profilesDir); err != nil {
		return "", Profile{}, err
	}
	if profilesDir != "" {
		for _, ext := range profileExts() {
			p := filepath.Join(profilesDir, engine, name+ext)
			b, err := os.ReadFile(p)
			if err == nil {
				return string(b), Profile{Name: name, Path: p}, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return "", Profile{}, fmt.Errorf("%s profile %q: %w", engine, name, err)
			}
		}
	}
	for _, ext := range profileExts() {
		b, err := builtinProfiles.ReadFile("profiles/" + engine + "/" + name + ext)
		if err == nil {
			return string(b), Profile{Name: name}, nil
		}
	}
	avail, err := Profiles(profilesDir, engine)
	if err != nil {
		return "", Profile{}, fmt.Errorf("unknown %s profile %q: %w", engine, name, err)
	}
	where := BuiltinProfiles
	if profilesDir != "" {
		where += ", or in " + filepath.Join(profilesDir, engine)
	} else {
		where += "; --profiles-dir or $DBPERF_PROFILES adds more"
	}
	return "", Profile{}, fmt.Errorf("unknown %s profile %q (available: %s; %s)", engine, name, strings.Join(avail, ", "), where)
}
