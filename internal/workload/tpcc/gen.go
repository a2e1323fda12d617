package tpcc

import (
	"math/rand/v2"
	"strconv"

	"github.com/dbperf/dbperf/internal/workload"
)

// clientRand is a client's random stream, its PCG source apart so that a transaction
// retried after a conflict can draw the same input again (the source is copied before).
func clientRand(seed int64, names ...string) (*rand.PCG, *rand.Rand) {
	r := workload.Stream(seed, names...)
	src := rand.NewPCG(r.Uint64(), r.Uint64())
	return src, rand.New(src)
}

// TPC-C's random data (clause 4.3.2): a-strings, n-strings, NURand and customer last
// names. Every generator takes the actor's own stream (workload.Stream).

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// between is a uniform integer in [lo, hi].
func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// appendAString appends an a-string of random length in [lo, hi] (letters and digits:
// no character a SQL literal must escape).
func appendAString(b []byte, r *rand.Rand, lo, hi int) []byte {
	for range between(r, lo, hi) {
		b = append(b, alnum[r.IntN(len(alnum))])
	}
	return b
}

// appendNString appends an n-string of n digits.
func appendNString(b []byte, r *rand.Rand, n int) []byte {
	for range n {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return b
}

// appendData appends an i_data or s_data value: an a-string of 26–50 characters, one in
// ten holding "ORIGINAL" at a random place (clause 4.3.3.1).
func appendData(b []byte, r *rand.Rand) []byte {
	n := between(r, 26, 50)
	if r.IntN(10) != 0 {
		return appendAString(b, r, n, n)
	}
	at := r.IntN(n - 8 + 1)
	b = appendAString(b, r, at, at)
	b = append(b, "ORIGINAL"...)
	return appendAString(b, r, n-8-at, n-8-at)
}

// nuRand is NURand(A, x, y) with the run's constant C for A (clause 2.1.6).
func nuRand(r *rand.Rand, a, c, x, y int) int {
	return ((between(r, 0, a)|between(r, x, y))+c)%(y-x+1) + x
}

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName is the customer last name of number n in [0, 999] (clause 4.3.2.3).
func lastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

// appendMoney appends cents as a decimal with two digits after the point.
func appendMoney(b []byte, cents int64) []byte {
	if cents < 0 {
		b = append(b, '-')
		cents = -cents
	}
	b = strconv.AppendInt(b, cents/100, 10)
	b = append(b, '.')
	c := cents % 100
	if c < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, c, 10)
}

// appendFrac appends n ten-thousandths as a decimal with four digits after the point
// (a tax or a discount: 0.0000–0.5000).
func appendFrac(b []byte, n int) []byte {
	b = strconv.AppendInt(b, int64(n/10000), 10)
	b = append(b, '.')
	s := strconv.Itoa(n % 10000)
	for range 4 - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// parseCents reads a decimal's text ("12.3", "-10.00", "7") as cents, rounded.
func parseCents(b []byte) int64 {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0
	}
	if f < 0 {
		return int64(f*100 - 0.5)
	}
	return int64(f*100 + 0.5)
}
