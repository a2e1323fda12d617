package sqlite

import (
	"slices"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

func TestDialectSQL(t *testing.T) {
	d := Dialect{}
	idx := []engine.Index{
		{Name: "pi1_marketsegment", Columns: []string{"productid", "customerid", "price"}},
		{Name: "pi1_pdc", Columns: []string{"price", "dateandtime", "customerid"}},
	}
	from, ok := d.FromIndex("pi1", "pi1_pdc")
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"Name", []string{d.Name()}, []string{"sqlite"}},
		{"Placeholder", []string{d.Placeholder(1), d.Placeholder(7)}, []string{"?", "?"}},
		{"AutoIncrementPK", []string{d.AutoIncrementPK()}, []string{"INTEGER PRIMARY KEY AUTOINCREMENT"}},
		{"DateTimeType", []string{d.DateTimeType()}, []string{"TEXT"}},
		{
			"CreateTable",
			d.CreateTable("pi1", []string{"transactionid INTEGER PRIMARY KEY AUTOINCREMENT", "price int NOT NULL"}),
			[]string{"CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY AUTOINCREMENT, price int NOT NULL)"},
		},
		{"DropTable", []string{d.DropTable("pi1")}, []string{"DROP TABLE IF EXISTS pi1"}},
		{
			"CreateIndexes", d.CreateIndexes("pi1", idx),
			[]string{
				"CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)",
				"CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)",
			},
		},
		{"CreateIndexes none", d.CreateIndexes("pi1", nil), []string{}},
		{"FromIndex", []string{from}, []string{"pi1 INDEXED BY pi1_pdc"}},
	}
	for _, tc := range tests {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
	if !ok {
		t.Error("FromIndex ok = false")
	}
	if d.AutoIncrementGaps() {
		t.Error("AutoIncrementGaps = true")
	}
}
