//go:build !linux

package browsertest

// killUsing is a no-op where /proc is missing: chromedp's own clean-up is
// all there is.
func killUsing(string) int { return 0 }
