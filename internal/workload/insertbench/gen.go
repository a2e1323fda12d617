package insertbench

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/config"
	"github.com/dbperf/dbperf/internal/workload"
)

// Row generation, reference §1.4.

// maxDataLength is the width of the data column, varchar(4000) (reference §1.2).
const maxDataLength = 4000

// dataBufferBytes is how many random bytes the data buffer encodes (reference §1.4: 4 MiB).
const dataBufferBytes = 4 << 20

// DateTimeLayout is how dateandtime values are written (reference §1.4: '%Y-%m-%d %H:%M:%S').
const DateTimeLayout = "2006-01-02 15:04:05"

// logicalEpoch is the dateandtime of a client's first row: 2026-01-01 00:00:00 UTC.
const logicalEpoch = 1767225600

// rowsPerLogicalSecond is how many rows a client inserts per second of its logical clock.
const rowsPerLogicalSecond = 1000

// LogicalTime is the dateandtime of a batch that starts after a client has inserted rows
// rows in the run. The reference uses the wall clock, once per batch; dbperf's workloads
// must not read a clock (the runner times everything), and data must not depend on how fast
// an engine is, so the clock is logical: it starts at 2026-01-01 00:00:00 and advances one
// second per 1000 rows of the client. Values still grow with insertion order, one value per
// batch, as the pdc index (price, dateandtime, customerid) expects.
func LogicalTime(rows int64) string {
	return time.Unix(logicalEpoch+rows/rowsPerLogicalSecond, 0).UTC().Format(DateTimeLayout)
}

// DataBuffer is the immutable source of the data column's random part: the base64 text of
// 4 MiB of seeded random bytes (the reference encodes os.urandom; dbperf seeds it so that a
// seed fixes the data). One is built per Plan and shared by every insert actor.
type DataBuffer struct {
	text string
}

// NewDataBuffer builds the data buffer for a seed.
func NewDataBuffer(seed int64) *DataBuffer {
	rng := workload.Stream(seed, Name, "data-buffer")
	raw := make([]byte, dataBufferBytes)
	for i := 0; i < len(raw); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(raw); j++ {
			raw[i+j] = byte(v >> (8 * j))
		}
	}
	return &DataBuffer{text: base64.StdEncoding.EncodeToString(raw)}
}

// Len is the length of the buffer's text.
func (b *DataBuffer) Len() int { return len(b.text) }

// Row is one generated row (reference §1.4). transactionid is assigned by the engine.
type Row struct {
	DateAndTime    string
	CashRegisterID int64
	CustomerID     int64
	ProductID      int64
	Price          int64
	Data           string
}

// RowGenerator generates the rows of one insert actor. It is not safe for concurrent use:
// each actor has its own, with its own random stream.
type RowGenerator struct {
	rng                                      *rand.Rand
	buf                                      *DataBuffer
	boxes                                    intBoxes
	cashregisters, products, customers, maxP int
	lenMin, lenMax, pct                      int
	// pad is 'a' × DataLengthMax: data prefixes are slices of it.
	pad string
	// when and whenBox are the current batch's dateandtime, as set by StartBatch.
	when    string
	whenSec int64
	whenBox any
}

// NewRowGenerator returns a generator of rows shaped by ib (bounds and data length), taking
// the random part of data from buf and every random choice from rng.
func NewRowGenerator(ib *config.InsertBench, buf *DataBuffer, rng *rand.Rand) *RowGenerator {
	return newRowGenerator(ib, buf, nil, rng)
}

func newRowGenerator(ib *config.InsertBench, buf *DataBuffer, boxes intBoxes, rng *rand.Rand) *RowGenerator {
	g := &RowGenerator{
		rng: rng, buf: buf, boxes: boxes,
		cashregisters: ib.Cashregisters, products: ib.Products, customers: ib.Customers, maxP: ib.MaxPrice,
		lenMin: ib.DataLengthMin, lenMax: ib.DataLengthMax, pct: ib.DataRandomPct,
		pad:     strings.Repeat("a", ib.DataLengthMax),
		whenSec: -1,
	}
	g.StartBatch(0)
	return g
}

// StartBatch sets the dateandtime of the rows that follow: all rows of a batch share it
// (reference §1.4). rowsSoFar is how many rows the client inserted in the run before the
// batch (LogicalTime).
func (g *RowGenerator) StartBatch(rowsSoFar int64) {
	sec := rowsSoFar / rowsPerLogicalSecond
	if sec == g.whenSec {
		return // the same logical second: reuse the string (and its boxed form)
	}
	g.whenSec = sec
	g.when = LogicalTime(rowsSoFar)
	g.whenBox = g.when
}

// Next fills r with the next row.
func (g *RowGenerator) Next(r *Row) {
	r.DateAndTime = g.when
	r.CashRegisterID, r.ProductID, r.CustomerID, r.Price = g.ints()
	r.Data = g.data()
}

// fillArgs fills args (len a multiple of insertColumns) with the next rows in the column
// order of the INSERT (insertColumnList). Small integers come pre-boxed from the plan's
// table, so a row costs the allocation of its data value and little else.
func (g *RowGenerator) fillArgs(args []any) {
	for k := 0; k+insertColumns <= len(args); k += insertColumns {
		cash, prod, cust, price := g.ints()
		args[k] = g.whenBox
		args[k+1] = g.boxes.box(cash)
		args[k+2] = g.boxes.box(cust)
		args[k+3] = g.boxes.box(prod)
		args[k+4] = g.boxes.box(price)
		args[k+5] = g.data()
	}
}

// ints draws cashregisterid [0,1000), productid [0,10000), customerid [0,100000) and
// price [0,500) with the default bounds. Price is an integer, as its column is (the
// reference renders it "%.2f" into an int column).
func (g *RowGenerator) ints() (cash, prod, cust, price int64) {
	cash = int64(g.rng.IntN(g.cashregisters))
	prod = int64(g.rng.IntN(g.products))
	cust = int64(g.rng.IntN(g.customers))
	price = int64(g.rng.IntN(g.maxP))
	return
}

// data is the data column: len uniform in [min, max]; rand_len = int(len × 0.75 × pct/100)
// (0.75 "to account for base64 overhead"), computed exactly in integers; the value is
// 'a' × (len − rand_len) followed by rand_len characters of the data buffer taken at a
// uniform offset.
func (g *RowGenerator) data() string {
	n := g.lenMin + g.rng.IntN(g.lenMax-g.lenMin+1)
	randLen := dataRandLen(n, g.pct)
	off := g.rng.IntN(len(g.buf.text) - randLen + 1)
	switch {
	case randLen == 0:
		return g.pad[:n]
	case randLen == n:
		return g.buf.text[off : off+n]
	}
	return g.pad[:n-randLen] + g.buf.text[off:off+randLen]
}

// dataRandLen is rand_len = int(len × 0.75 × pct/100), exact, never more than len.
func dataRandLen(n, pct int) int { return min(n*75*pct/10000, n) }

// intBoxes holds the integers [0, n) already converted to interface values: binding an
// int64 as an argument would otherwise allocate for every value above 255. Immutable,
// built once per plan, shared by every actor.
type intBoxes []any

// maxBoxes bounds the table (a configuration with huge value ranges boxes the rest).
const maxBoxes = 1 << 17

func newIntBoxes(n int) intBoxes {
	b := make(intBoxes, min(max(n, 0), maxBoxes))
	for i := range b {
		b[i] = int64(i)
	}
	return b
}

// box returns v as an interface value, from the table when it is in range.
func (b intBoxes) box(v int64) any {
	if v >= 0 && v < int64(len(b)) {
		return b[v]
	}
	return v
}

// stream is the random stream of one actor: (seed, step, role, client) identify it, so no
// two actors share one (reference §5.6).
func stream(seed int64, step, role string, client int) *rand.Rand {
	return workload.Stream(seed, Name, step, role, strconv.Itoa(client))
}
