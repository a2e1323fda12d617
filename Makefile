# dbperf — build, run the default benchmark, test, benchmark.
# `make run` and `make test` are the two commands of the README's first screen; both
# install what they need (a C compiler for the cgo SQLite driver) when run as root.

GO      ?= go
BIN     ?= bin/dbperf
SCALE   ?= small
# Where `make run` stores results (the same default as dbperf itself).
RESULTS ?= ./dbperf-results.db
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
export CGO_ENABLED = 1

.PHONY: all build run test check bench deps test-deps fmt-check tidy-check

all: build

# deps installs the C toolchain cgo needs (mattn/go-sqlite3) when it is missing.
deps:
	@scripts/deps.sh build

build: deps
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dbperf

# The Insert Benchmark on embedded SQLite in a temporary directory; prints the summary.
# RUNARGS adds flags (archtest passes --time 1).
run: build
	$(BIN) run insertbench --engine sqlite --scale $(SCALE) --results $(RESULTS) $(RUNARGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# ALONE_PKGS: the packages with a test that asserts a rate, a latency, CPU per operation or
# a timing bound a loaded machine breaks, and those starting many servers at once (a
# server's free port can be taken by another's before it binds). make test runs them one
# at a time (-p 1), after the other packages, which run two at a time (-p 2). A package
# gains such a test: add it here (docs/development.md, "Test time").
ALONE_PKGS = internal/cli internal/faulttest internal/runner internal/hwstat internal/netdelay \
	internal/profile internal/record internal/engine/blockconn internal/engine/pebble \
	internal/workload/insertbench internal/workload/script internal/workload/sysbench \
	internal/server/mariadb internal/server/postgres

test-deps:
	@scripts/deps.sh test

# make test prints where its time went: installing, vetting and building, then the tests
# themselves (README "Development": the goal is under 9 minutes of tests on 2 cores).
test: fmt-check
	@t0=$$(date +%s); \
	scripts/deps.sh test && \
	echo "$(GO) vet ./..." && $(GO) vet ./... && \
	echo "$(GO) build -o $(BIN) ./cmd/dbperf" && $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/dbperf || exit 1; \
	t1=$$(date +%s); \
	alone=$$($(GO) list $(addprefix ./,$(ALONE_PKGS))) && beside=$$($(GO) list ./... | grep -vxF "$$alone") || exit 1; \
	python3 -m unittest discover -s tools -t . -q; rc=$$?; \
	if [ $$rc = 0 ]; then \
		DBPERF_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -p 2 -timeout 20m $$beside || rc=1; \
		DBPERF_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -p 1 -timeout 20m $$alone || rc=1; \
	fi; \
	t2=$$(date +%s); \
	echo "make test: install, vet and build $$((t1-t0)) s; tests $$((t2-t1)) s"; \
	exit $$rc

# go.mod and go.sum as `go mod tidy` would write them (it prints the difference otherwise).
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

# A quick loop while editing: the tests that need no server or benchmark run (-short).
check: deps fmt-check tidy-check
	$(GO) vet ./...
	python3 -m unittest discover -s tools -t . -q
	$(GO) test -short -count=1 ./...

# BenchmarkClient (internal/workload/insertbench) starts managed PostgreSQL and MariaDB
# servers, hence test-deps; it reports client CPU µs/op, allocs/op, context switches/op and
# the server's CPU µs/op per engine and operation kind. internal/workload/script's
# BenchmarkClient does the same per transaction of pgbench's built-in scripts.
bench: test-deps
	$(GO) test -p 1 -run '^$$' -bench . -benchmem ./internal/metrics/ ./internal/hwstat/ ./internal/runner/ ./internal/workload/... ./internal/report/ ./internal/changepoint/ ./internal/engine/rocksdb/ ./internal/engine/pebble/ ./internal/web/
