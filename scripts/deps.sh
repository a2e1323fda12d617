#!/usr/bin/env bash
# Installs what building and testing dbperf needs beyond Go itself, on Debian, as root:
# a C compiler and libc headers for the cgo SQLite driver. Idempotent and quiet when all
# is there. Later engines (PostgreSQL, MariaDB) add their packages here.
set -euo pipefail

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
[ -e /usr/include/stdlib.h ] || need+=(libc6-dev)
command -v git >/dev/null 2>&1 || need+=(git)

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "dbperf needs ${need[*]}: install them (sudo apt-get install ${need[*]}) or run make as root" >&2
		exit 2
	fi
	echo "installing ${need[*]} ..." >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v go >/dev/null 2>&1 || { echo "dbperf needs Go (https://go.dev/doc/install)" >&2; exit 2; }
