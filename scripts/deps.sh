#!/usr/bin/env bash
# Installs what building (deps.sh build) or testing (deps.sh test) dbperf needs beyond Go
# itself, on Debian, as root: a C compiler for the cgo SQLite driver, a C++ one for the
# rocksdb engine's calls into RocksDB's C++ API, and RocksDB's library and headers
# (librocksdb-dev 7.8.3, which grocksdb v1.7.14 links); for the tests also
# the database servers the conformance suite starts itself (PostgreSQL 15, MariaDB 10.11
# with the MyRocks plugin and Galera's galera-4 for its clusters) and Chromium, in which the HTML report is opened headless.
# Idempotent and quiet when all is there. Package services are
# kept from starting on install: dbperf starts its own throwaway servers.
set -euo pipefail
what=${1:-build}

need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++)
[ -e /usr/include/stdlib.h ] || need+=(libc6-dev)
command -v git >/dev/null 2>&1 || need+=(git)
[ -e /usr/include/rocksdb/c.h ] || need+=(librocksdb-dev)
if [ "$what" = test ]; then
	ls /usr/lib/postgresql/15/bin/initdb >/dev/null 2>&1 || need+=(postgresql-15)
	[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
	ls /usr/lib/mysql/plugin/ha_rocksdb.so >/dev/null 2>&1 || need+=(mariadb-plugin-rocksdb)
	ls /usr/lib/galera/libgalera_smm.so >/dev/null 2>&1 || need+=(galera-4)
	command -v chromium >/dev/null 2>&1 || need+=(chromium)
	command -v db_bench >/dev/null 2>&1 || need+=(rocksdb-tools)
	command -v perf >/dev/null 2>&1 || need+=(linux-perf)
fi

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "dbperf needs ${need[*]}: install them (sudo apt-get install ${need[*]}) or run make as root" >&2
		exit 2
	fi
	echo "installing ${need[*]} ..." >&2
	policy=/usr/sbin/policy-rc.d
	made_policy=
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	[ -z "$made_policy" ] || rm -f "$policy"
fi
command -v go >/dev/null 2>&1 || { echo "dbperf needs Go (https://go.dev/doc/install)" >&2; exit 2; }
