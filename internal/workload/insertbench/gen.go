package insertbench

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf/dbperf/internal/engine"
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
	cashregisters, products, customers, maxP int
	lenMin, lenMax, pct                      int
	// pad is 'a' × DataLengthMax: data prefixes are slices of it.
	pad string
	// when is the current batch's dateandtime, as set by StartBatch.
	when    string
	whenSec int64
	// draws is appendRows' reused batch of draws; touch is where it reads the buffer to.
	draws []rowDraw
	touch byte
}

// NewRowGenerator returns a generator of rows shaped by ib (bounds and data length), taking
// the random part of data from buf and every random choice from rng.
func NewRowGenerator(ib *Params, buf *DataBuffer, rng *rand.Rand) *RowGenerator {
	g := &RowGenerator{
		rng: rng, buf: buf,
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
		return // the same logical second: reuse the string
	}
	g.whenSec = sec
	g.when = LogicalTime(rowsSoFar)
}

// Next fills r with the next row.
func (g *RowGenerator) Next(r *Row) {
	r.DateAndTime = g.when
	r.CashRegisterID, r.ProductID, r.CustomerID, r.Price = g.ints()
	r.Data = g.data()
}

// appendRows appends the next rows rows to a, six values per row in the column order of
// the INSERT (insertColumnList). Nothing is allocated: integers are stored unboxed and the
// data value is copied straight from its two parts.
//
// The random part of every data value is read at a random offset of the 5.6 MB data
// buffer, so each row's read misses the CPU caches (~130 ns, more than the rest of the
// row's generation together). The batch is therefore drawn first (in the same order of
// random draws as Next), then the buffer is read at every row's offset in one tight loop,
// so the misses overlap instead of following each other, then the values are appended.
func (g *RowGenerator) appendRows(a *engine.Args, rows int) {
	if cap(g.draws) < rows {
		g.draws = make([]rowDraw, rows)
	}
	draws := g.draws[:rows]
	for i := range draws {
		d := &draws[i]
		d.cash, d.prod, d.cust, d.price = g.ints()
		d.n, d.randLen, d.off = g.dataShape()
	}
	var touch byte
	text := g.buf.text
	for i := range draws {
		if d := &draws[i]; d.randLen > 0 {
			touch += text[d.off]
		}
	}
	g.touch = touch // keeps the loop from being optimized away
	for i := range draws {
		d := &draws[i]
		a.Text(g.when)
		a.Int(d.cash)
		a.Int(d.cust)
		a.Int(d.prod)
		a.Int(d.price)
		a.Text2(g.pad[:d.n-d.randLen], text[d.off:d.off+d.randLen])
	}
}

// rowDraw is one row's random draws, in appendRows.
type rowDraw struct {
	cash, prod, cust, price int64
	n, randLen, off         int
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
	pad, random := g.dataParts()
	return pad + random
}

// dataParts draws the next data value and returns its two parts: the 'a' padding and the
// random characters.
func (g *RowGenerator) dataParts() (pad, random string) {
	n, randLen, off := g.dataShape()
	return g.pad[:n-randLen], g.buf.text[off : off+randLen]
}

// dataShape draws the next data value's length, the length of its random part and the
// offset of that part in the data buffer.
func (g *RowGenerator) dataShape() (n, randLen, off int) {
	n = g.lenMin + g.rng.IntN(g.lenMax-g.lenMin+1)
	randLen = dataRandLen(n, g.pct)
	off = g.rng.IntN(len(g.buf.text) - randLen + 1)
	return n, randLen, off
}

// dataRandLen is rand_len = int(len × 0.75 × pct/100), exact, never more than len.
func dataRandLen(n, pct int) int { return min(n*75*pct/10000, n) }

// stream is the random stream of one actor: (seed, step, role, client) identify it, so no
// two actors share one (reference §5.6).
func stream(seed int64, step, role string, client int) *rand.Rand {
	return workload.Stream(seed, Name, step, role, strconv.Itoa(client))
}
