package store

import (
	"context"
	"reflect"
	"testing"
)

// TestStepProfilesSchema9: a store of schema 8 migrates to 9 on both databases (its runs
// read back unchanged, without profiles), and a step's CPU profiles round-trip: stored
// when the step finished, replaced by a second call, read back by Results in role order
// with their folded text, and copied by Import.
func TestStepProfilesSchema9(t *testing.T) {
	for _, b := range storeLocations() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			loc := b.loc(t)
			s := openAt(t, loc)
			old := writeRun(t, s, testMeta("old"), RunOK)
			want, err := s.Results(ctx, []int64{old})
			if err != nil {
				t.Fatal(err)
			}
			withoutHists(want) // an older schema kept no histograms
			// Back to schema 8: no step_profiles table.
			setVersion := `PRAGMA user_version = 8`
			if s.db.d == postgresDialect {
				setVersion = `UPDATE dbperf_schema SET version = 8`
			}
			for _, q := range []string{`DROP TABLE step_label_hists`, `DROP TABLE step_statements`, `DROP TABLE step_waits`, `DROP TABLE step_profiles`, setVersion} {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Close()

			m := openAt(t, loc)
			version := `PRAGMA user_version`
			if m.db.d == postgresDialect {
				version = `SELECT version FROM dbperf_schema`
			}
			var v int
			if err := m.db.QueryRowContext(ctx, version).Scan(&v); err != nil || v != SchemaVersion {
				t.Fatalf("schema version %d (%v) after migration, want %d", v, err, SchemaVersion)
			}
			got, err := m.Results(ctx, []int64{old})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("a schema 8 run changed in migration\n got: %+v\nwant: %+v", got, want)
			}

			id := writeRun(t, m, testMeta("new"), RunOK)
			runs, err := m.Results(ctx, []int64{id})
			if err != nil {
				t.Fatal(err)
			}
			stepID := runs[0].Steps[0].ID
			folded := func(text string) []byte {
				b, err := CompressFolded([]byte(text))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			first := []StepProfile{{Role: "insert", Event: "cycles", Hz: 99, Samples: 1, Stacks: 1, Folded: folded("main;f 1\n")}}
			if err := m.PutStepProfiles(ctx, stepID, first); err != nil {
				t.Fatal(err)
			}
			profs := []StepProfile{
				{Role: "insert", Event: "cpu-clock", Hz: 999, Samples: 7, Stacks: 2, Folded: folded("main;f;g 5\nmain;h 2\n")},
				{Role: "background:walwriter", Event: "cpu-clock", Hz: 999, Samples: 3, Stacks: 1, Folded: folded("main;w 3\n")},
			}
			if err := m.PutStepProfiles(ctx, stepID, profs); err != nil {
				t.Fatal(err)
			}
			runs, err = m.Results(ctx, []int64{id})
			if err != nil {
				t.Fatal(err)
			}
			wantProfs := []StepProfile{profs[1], profs[0]} // role order
			if p := runs[0].Steps[0].Profiles; !reflect.DeepEqual(p, wantProfs) {
				t.Errorf("profiles read back as %+v, want %+v", p, wantProfs)
			}
			if p := runs[0].Steps[1].Profiles; p != nil {
				t.Errorf("a step without profiles reads back with %+v", p)
			}
			if text, err := runs[0].Steps[0].Profiles[1].FoldedText(); err != nil || string(text) != "main;f;g 5\nmain;h 2\n" {
				t.Errorf("folded text %q (%v)", text, err)
			}

			to, _ := openTemp(t)
			cid, added, err := to.Import(ctx, runs[0])
			if err != nil || !added {
				t.Fatalf("import: %v (added %v)", err, added)
			}
			copied, err := to.Results(ctx, []int64{cid})
			if err != nil {
				t.Fatal(err)
			}
			if p := copied[0].Steps[0].Profiles; !reflect.DeepEqual(p, wantProfs) {
				t.Errorf("imported profiles %+v, want %+v", p, wantProfs)
			}
		})
	}
}

// TestCompressFolded: folded text round-trips and a text over MaxFoldedBytes is refused.
func TestCompressFolded(t *testing.T) {
	b, err := CompressFolded([]byte("a;b 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if text, err := (StepProfile{Folded: b}).FoldedText(); err != nil || string(text) != "a;b 1\n" {
		t.Errorf("%q, %v", text, err)
	}
	if _, err := CompressFolded(make([]byte, MaxFoldedBytes+1)); err == nil {
		t.Error("a folded text over MaxFoldedBytes was compressed")
	}
	if _, err := (StepProfile{Role: "x", Folded: []byte("not gzip")}).FoldedText(); err == nil {
		t.Error("a corrupt profile read without error")
	}
}
