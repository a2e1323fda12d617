package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
	"github.com/dbperf/dbperf/internal/hwstat"
)

// remoteHandle is a server handle that says its server is on another machine. Only the
// methods HWTargets calls are real; the rest are never reached.
type remoteHandle struct {
	engine.SQL
	local bool
}

func (h remoteHandle) Local() bool { return h.local }
func (h remoteHandle) SessionPID(engine.Session) (int, error) {
	return 0, errors.New("not asked for a remote server")
}
func (h remoteHandle) NewSession(context.Context) (engine.Session, error) {
	return nil, errors.New("no server behind this test handle")
}

// TestHWTargetsRemoteAndEmbedded: a --dsn server on another machine has neither server
// processes nor devices sampled, is marked remote, and the env says why; a local one whose
// process cannot be found is not remote (the machine is the benchmark's) but says why; an
// embedded engine samples its work dir's disks.
func TestHWTargetsRemoteAndEmbedded(t *testing.T) {
	s, err := hwstat.New()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	ht, dir := HWTargets(context.Background(), engine.Meta{Name: "postgres"}, &Target{Handle: remoteHandle{}},
		engine.Info{DataDir: "/var/lib/postgresql/15/main"}, s, env)
	if !ht.Remote || ht.ServerPID != 0 || len(ht.Devices) != 0 || dir != "" {
		t.Errorf("remote: %+v dir %q", ht, dir)
	}
	if !strings.Contains(env[envServerProcesses], "another machine") || !strings.Contains(env[envIODevicesNote], "not this machine's") {
		t.Errorf("remote env: %v", env)
	}

	env = map[string]string{}
	ht, _ = HWTargets(context.Background(), engine.Meta{Name: "postgres"}, &Target{Handle: remoteHandle{local: true}},
		engine.Info{}, s, env)
	if ht.Remote || ht.ServerPID != 0 || !strings.Contains(env[envServerProcesses], "no server behind this test handle") {
		t.Errorf("a local server whose session cannot be opened: %+v %v", ht, env)
	}

	env = map[string]string{}
	work := t.TempDir()
	ht, dir = HWTargets(context.Background(), engine.Meta{Name: "sqlite", Embedded: true}, &Target{Dir: work}, engine.Info{}, s, env)
	if !ht.Embedded || ht.Remote || dir != work || !strings.HasPrefix(env[envServerProcesses], "embedded") {
		t.Errorf("embedded: %+v %q %v", ht, dir, env)
	}
	if len(ht.Devices) == 0 && env[envIODevicesNote] == "" {
		t.Errorf("embedded: neither devices nor the reason: %v", env)
	}
}
