package insertbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/dbperf/dbperf/internal/engine"
)

func testShape(t testing.TB) *Params {
	t.Helper()
	ib, err := Preset("tiny", 1)
	if err != nil {
		t.Fatal(err)
	}
	return ib
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

func rows(g *RowGenerator, n int) []Row {
	out := make([]Row, n)
	for i := range out {
		g.StartBatch(int64(i))
		g.Next(&out[i])
	}
	return out
}

func TestLogicalTime(t *testing.T) {
	for rows, want := range map[int64]string{
		0:          "2026-01-01 00:00:00",
		999:        "2026-01-01 00:00:00",
		1000:       "2026-01-01 00:00:01",
		3_599_999:  "2026-01-01 00:59:59",
		86_400_000: "2026-01-02 00:00:00",
	} {
		if got := LogicalTime(rows); got != want {
			t.Errorf("LogicalTime(%d) = %q, want %q", rows, got, want)
		}
	}
}

func TestDataBuffer(t *testing.T) {
	b := NewDataBuffer(1)
	if b.Len() != 5592408 { // base64 of 4 MiB: ⌈4194304/3⌉·4
		t.Errorf("Len = %d", b.Len())
	}
	if NewDataBuffer(1).text != b.text {
		t.Error("same seed, different buffers")
	}
	if NewDataBuffer(2).text[:1000] == b.text[:1000] {
		t.Error("different seeds, same buffer")
	}
}

// Every value is within its bounds (reference §1.4), and data has the reference's shape.
func TestRowGeneratorRanges(t *testing.T) {
	buf := NewDataBuffer(7)
	for _, tc := range []struct{ min, max, pct int }{{10, 20, 50}, {10, 10, 0}, {1, 40, 100}, {0, 3, 50}, {100, 200, 80}} {
		ib := testShape(t)
		ib.DataLengthMin, ib.DataLengthMax, ib.DataRandomPct = tc.min, tc.max, tc.pct
		g := NewRowGenerator(ib, buf, stream(7, "l.i0", "insert", 1))
		seenLen := map[int]bool{}
		for i, r := range rows(g, 20000) {
			if r.CashRegisterID < 0 || r.CashRegisterID >= 1000 || r.ProductID < 0 || r.ProductID >= 10000 ||
				r.CustomerID < 0 || r.CustomerID >= 100000 || r.Price < 0 || r.Price >= 500 {
				t.Fatalf("out of range: %+v", r)
			}
			n := len(r.Data)
			if n < tc.min || n > tc.max {
				t.Fatalf("%+v: data length %d", tc, n)
			}
			seenLen[n] = true
			randLen := n * 75 * tc.pct / 10000 // int(len × 0.75 × pct/100)
			prefix, tail := r.Data[:n-randLen], r.Data[n-randLen:]
			if strings.Trim(prefix, "a") != "" {
				t.Fatalf("%+v: data %q: prefix %q is not all 'a'", tc, r.Data, prefix)
			}
			if strings.Trim(tail, base64Alphabet) != "" || (i < 200 && !strings.Contains(buf.text, tail)) {
				t.Fatalf("%+v: data %q: tail %q is not from the buffer", tc, r.Data, tail)
			}
		}
		if len(seenLen) != tc.max-tc.min+1 {
			t.Errorf("%+v: saw %d distinct lengths, want %d", tc, len(seenLen), tc.max-tc.min+1)
		}
	}
	// With the drivers' settings (10..20, 50%) rand_len is 3..7 (reference §1.4).
	if dataRandLen(10, 50) != 3 || dataRandLen(20, 50) != 7 || dataRandLen(16, 50) != 6 || dataRandLen(4, 200) != 4 {
		t.Error("rand_len formula")
	}
}

func TestRowGeneratorDeterminism(t *testing.T) {
	ib := testShape(t)
	gen := func(seed int64, step, role string, client int) []Row {
		return rows(NewRowGenerator(ib, NewDataBuffer(seed), stream(seed, step, role, client)), 500)
	}
	a := gen(1, "l.i0", "insert", 1)
	if fmt.Sprint(a) != fmt.Sprint(gen(1, "l.i0", "insert", 1)) {
		t.Fatal("same seed, different rows")
	}
	for name, other := range map[string][]Row{
		"seed":   gen(2, "l.i0", "insert", 1),
		"client": gen(1, "l.i0", "insert", 2),
		"step":   gen(1, "l.i1", "insert", 1),
	} {
		same := 0
		for i := range a {
			if a[i] == other[i] {
				same++
			}
		}
		if same > 5 {
			t.Errorf("different %s: %d of %d rows identical", name, same, len(a))
		}
	}
}

// appendRows (the inserter's path) binds the same values as Next, in INSERT column order.
func TestAppendRowsMatchesNext(t *testing.T) {
	ib := testShape(t)
	buf := NewDataBuffer(3)
	want := rows(NewRowGenerator(ib, buf, stream(3, "s", "insert", 1)), 50)
	g := NewRowGenerator(ib, buf, stream(3, "s", "insert", 1))
	var a engine.Args
	for i, w := range want {
		g.StartBatch(int64(i))
		a.Reset()
		g.appendRows(&a, 1)
		if a.Len() != insertColumns {
			t.Fatalf("row %d: %d values, want %d", i, a.Len(), insertColumns)
		}
		kinds := []engine.ArgKind{engine.ArgText, engine.ArgInt, engine.ArgInt, engine.ArgInt, engine.ArgInt, engine.ArgText}
		for c, k := range kinds {
			if a.Kind(c) != k {
				t.Fatalf("row %d column %d: kind %d, want %d", i, c, a.Kind(c), k)
			}
		}
		got := Row{string(a.TextAt(0)), a.IntAt(1), a.IntAt(2), a.IntAt(3), a.IntAt(4), string(a.TextAt(5))}
		w2 := Row{w.DateAndTime, w.CashRegisterID, w.CustomerID, w.ProductID, w.Price, w.Data}
		if got != w2 {
			t.Fatalf("row %d: appendRows %+v, Next %+v", i, got, w2)
		}
	}
}

// The generated data's fingerprint: when it changes, bump the workload's Meta.Version
// (results of different data must not be compared unknowingly), then update the constant.
func TestRowFingerprint(t *testing.T) {
	ib := testShape(t)
	g := NewRowGenerator(ib, NewDataBuffer(3221223452), stream(3221223452, "l.i0", "insert", 1))
	h := sha256.New()
	var r Row
	for i := range 10000 {
		if i%100 == 0 {
			g.StartBatch(int64(i))
		}
		g.Next(&r)
		fmt.Fprintf(h, "%s|%d|%d|%d|%d|%s\n", r.DateAndTime, r.CashRegisterID, r.CustomerID, r.ProductID, r.Price, r.Data)
	}
	const want = "753784cab8ba881a71c5498644c487459ff989202c5db1043399068bf97427b8"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("fingerprint of generated rows = %s, want %s (bump Meta.Version if the data changed on purpose)", got, want)
	}
}

func BenchmarkRowGenerator(b *testing.B) {
	ib := testShape(b)
	g := NewRowGenerator(ib, NewDataBuffer(1), stream(1, "bench", "insert", 1))
	var r Row
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%100 == 0 {
			g.StartBatch(int64(i))
		}
		g.Next(&r)
	}
}

// BenchmarkAppendRows is the inserter's hot path: one 100-row batch per iteration.
func BenchmarkAppendRows(b *testing.B) {
	ib := testShape(b)
	g := NewRowGenerator(ib, NewDataBuffer(1), stream(1, "bench", "insert", 1))
	var a engine.Args
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i += 100 {
		a.Reset()
		g.StartBatch(i)
		g.appendRows(&a, 100)
	}
}
