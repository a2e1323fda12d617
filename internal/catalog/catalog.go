// Package catalog lists the workloads and engines dbperf knows, explicitly (no init()
// registration, no global maps), and says which combinations work. The cli asks it after
// the config is validated; adding an engine, a server engine or a workload is one line here.
//
// Workloads, Engines and Servers are the lists (WorkloadNames and ServerNames name them);
// Workload, Engine and Server look one up by name (Server: the server.Engine of a client engine's name), and Check says whether a
// workload runs on an engine. Nothing in the cli names an engine: --managed,
// --engine-version, `dbperf server install|start|stop|list` and --mysql-storage-engine
// (from engine.Meta.StorageEngines) find it through the catalog.
package catalog

import (
	"fmt"
	"strings"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/engine/mariadb"
	"github.com/dbperf/dbperf/internal/engine/pebble"
	"github.com/dbperf/dbperf/internal/engine/postgres"
	"github.com/dbperf/dbperf/internal/engine/rocksdb"
	"github.com/dbperf/dbperf/internal/engine/sqlite"
	"github.com/dbperf/dbperf/internal/server"
	mariadbserver "github.com/dbperf/dbperf/internal/server/mariadb"
	pgserver "github.com/dbperf/dbperf/internal/server/postgres"
	"github.com/dbperf/dbperf/internal/workload"
	"github.com/dbperf/dbperf/internal/workload/dbbench"
	"github.com/dbperf/dbperf/internal/workload/insertbench"
	"github.com/dbperf/dbperf/internal/workload/script"
	"github.com/dbperf/dbperf/internal/workload/sysbench"
	"github.com/dbperf/dbperf/internal/workload/tpcc"
)

// Workloads returns every workload, in the order `--help` lists them.
func Workloads() []workload.Workload {
	return []workload.Workload{
		insertbench.New(),
		sysbench.New(),
		dbbench.New(),
		script.New(),
		tpcc.New(),
	}
}

// EngineOptions configure engines that have variants (MariaDB's storage engine).
type EngineOptions struct {
	StorageEngine string
}

// Engines returns every engine, the default first.
func Engines(o EngineOptions) []engine.Engine {
	return []engine.Engine{
		sqlite.New(),
		postgres.New(),
		mariadb.New(o.StorageEngine),
		rocksdb.New(),
		pebble.New(),
	}
}

// Servers returns every server engine dbperf starts (--managed, `dbperf server`), each
// serving the client engine of its name.
func Servers() []server.Engine {
	return []server.Engine{
		pgserver.New(),
		mariadbserver.New(),
	}
}

// ServerNames are the names of the server engines, in Servers' order.
func ServerNames() []string {
	var names []string
	for _, s := range Servers() {
		names = append(names, s.Name())
	}
	return names
}

// Server finds the server engine of a client engine's name.
func Server(name string) (server.Engine, error) {
	for _, s := range Servers() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("dbperf manages %s servers, not %q", strings.Join(ServerNames(), " and "), name)
}

// WorkloadNames names the workloads whose Meta keep keeps (nil: every one), in
// Workloads' order.
func WorkloadNames(keep func(workload.Meta) bool) []string {
	var names []string
	for _, w := range Workloads() {
		if m := w.Meta(); keep == nil || keep(m) {
			names = append(names, m.Name)
		}
	}
	return names
}

// Workload finds a workload by name.
func Workload(name string) (workload.Workload, error) {
	for _, w := range Workloads() {
		if w.Meta().Name == name {
			return w, nil
		}
	}
	return nil, fmt.Errorf("unknown workload %q: use one of %s", name, strings.Join(WorkloadNames(nil), ", "))
}

// Engine finds an engine by name.
func Engine(name string, o EngineOptions) (engine.Engine, error) {
	var names []string
	for _, e := range Engines(o) {
		if e.Meta().Name == name {
			return e, nil
		}
		names = append(names, e.Meta().Name)
	}
	return nil, fmt.Errorf("unknown engine %q: use one of %s", name, strings.Join(names, ", "))
}

// Check says whether a workload can run on an engine.
func Check(w workload.Workload, e engine.Engine) error {
	if w.Meta().Kind != e.Meta().Kind {
		return fmt.Errorf("workload %s needs a %s engine but %s is a %s engine",
			w.Meta().Name, w.Meta().Kind, e.Meta().Name, e.Meta().Kind)
	}
	return nil
}
