package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestMatchNormalized: pg_stat_statements' text of a statement matches the text the
// workload prepared when only constants became parameters.
func TestMatchNormalized(t *testing.T) {
	del := "DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid ASC LIMIT 50)"
	for _, tc := range []struct {
		n, q string
		want bool
	}{
		{"DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid ASC LIMIT $2)", del, true},
		{"DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 WHERE transactionid > $1 ORDER BY transactionid ASC LIMIT $2)", del, false},
		{"SELECT a FROM t WHERE a = $1", "SELECT a FROM t WHERE a = $1", true},
		{"SELECT a FROM t WHERE a = $1", "SELECT a FROM t WHERE a = $12", false},
		{"SELECT a FROM t WHERE b = $2 AND a = $1", "SELECT a FROM t WHERE b = 'it''s' AND a = $1", true},
		{"SELECT a FROM t WHERE b > $1", "SELECT a FROM t WHERE b > -1.5e3", true},
		{"SELECT a FROM t WHERE b > $1", "SELECT a FROM t WHERE b > c", false},
		{"SELECT a FROM t LIMIT $1", "SELECT a FROM t LIMIT 5 OFFSET 1", false},
	} {
		if got := matchNormalized(tc.n, tc.q); got != tc.want {
			t.Errorf("matchNormalized(%q, %q) = %v", tc.n, tc.q, got)
		}
	}
}

// TestParamSamples: a statement's binary integers, text and NULL are kept as text once per
// epoch and found by pg_stat_statements' text; EXECUTE's arguments quote them.
func TestParamSamples(t *testing.T) {
	var ps paramSamples
	q := "SELECT x FROM t WHERE a >= $1 AND b = $2 AND c = $3 AND d = $4 LIMIT  10"
	ps.put(q, []uint32{pgtype.Int8OID, pgtype.TextOID, pgtype.Int4OID, pgtype.Int2OID},
		[][]byte{{0, 0, 0, 0, 0, 0, 0x01, 0x00}, []byte("o'k"), nil, {0xff, 0xfe}},
		[]int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode, pgtype.BinaryFormatCode, pgtype.BinaryFormatCode})
	got, sample, ok := ps.get("SELECT x FROM t WHERE a >= $1 AND b = $2 AND c = $3 AND d = $4 LIMIT $5")
	if !ok || got != "SELECT x FROM t WHERE a >= $1 AND b = $2 AND c = $3 AND d = $4 LIMIT 10" {
		t.Fatalf("get: %q, %v", got, ok)
	}
	if l := literals(sample); l != "('256', 'o''k', NULL, '-2')" {
		t.Errorf("literals %s", l)
	}
	if _, _, ok := ps.get("SELECT y FROM t"); ok {
		t.Error("a statement the workload did not run has a sample")
	}
}
