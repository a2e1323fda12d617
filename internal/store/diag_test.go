package store

import (
	"context"
	"reflect"
	"testing"
)

// TestStepDiagSchema10: a store of schema 9 migrates to 10 on both databases (its runs
// read back unchanged), and a step's statements and waits round-trip: replaced by a
// second call, read back most time first and in role and wait order, copied by Import.
func TestStepDiagSchema10(t *testing.T) {
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
			setVersion := `PRAGMA user_version = 9`
			if s.db.d == postgresDialect {
				setVersion = `UPDATE dbperf_schema SET version = 9`
			}
			for _, q := range []string{`DROP TABLE step_label_hists`, `DROP TABLE step_statements`, `DROP TABLE step_waits`, setVersion} {
				if _, err := s.db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			_ = s.Close()

			m := openAt(t, loc)
			got, err := m.Results(ctx, []int64{old})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("a schema 9 run changed in migration\n got: %+v\nwant: %+v", got, want)
			}

			id := writeRun(t, m, testMeta("new"), RunOK)
			runs, err := m.Results(ctx, []int64{id})
			if err != nil {
				t.Fatal(err)
			}
			stepID := runs[0].Steps[0].ID
			if err := m.PutStepDiag(ctx, stepID, []StepStatement{{QueryID: "1", Query: "x", Calls: 1}}, nil); err != nil {
				t.Fatal(err)
			}
			stmts := []StepStatement{
				{QueryID: "11", Query: "SELECT 1", Calls: 10, ExecSec: 0.5, Rows: 10, BlocksHit: 30, PlanNote: "no plan"},
				{QueryID: "-7", Query: "INSERT INTO t VALUES ($1)", Calls: 100, Plans: 100, PlanSec: 0.25, ExecSec: 1.5, Rows: 100,
					RowsExamined: 3, BlocksHit: 400, BlocksRead: 2, BlocksDirtied: 5, BlocksWritten: 1, WALBytes: 123456789012, JITSec: 0.125,
					Plan:       `[{"Plan": {"Node Type": "ModifyTable"}}]`,
					CustomPlan: `[{"Plan": {"Node Type": "ModifyTable", "Plans": []}}]`, CustomPlanNote: "$1 = '7'"}, // schema 12
			}
			waits := []StepWait{
				{Role: "insert", Wait: "CPU", Samples: 30, Hz: 20},
				{Role: "delete", Wait: "IO:DataFileRead", Samples: 2, Hz: 20},
				{Role: "delete", Wait: "CPU", Samples: 28, Hz: 20},
			}
			if err := m.PutStepDiag(ctx, stepID, stmts, waits); err != nil {
				t.Fatal(err)
			}
			runs, err = m.Results(ctx, []int64{id})
			if err != nil {
				t.Fatal(err)
			}
			wantStmts := []StepStatement{stmts[1], stmts[0]}
			wantWaits := []StepWait{waits[2], waits[1], waits[0]}
			check := func(what string, st Step) {
				t.Helper()
				if !reflect.DeepEqual(st.Statements, wantStmts) {
					t.Errorf("%s statements %+v, want %+v", what, st.Statements, wantStmts)
				}
				if !reflect.DeepEqual(st.Waits, wantWaits) {
					t.Errorf("%s waits %+v, want %+v", what, st.Waits, wantWaits)
				}
			}
			check("stored", runs[0].Steps[0])
			if st := runs[0].Steps[1]; st.Statements != nil || st.Waits != nil {
				t.Errorf("a step without statements reads back with %+v %+v", st.Statements, st.Waits)
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
			check("imported", copied[0].Steps[0])
		})
	}
}
