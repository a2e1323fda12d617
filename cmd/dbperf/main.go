// Command dbperf runs database benchmarks, stores every result and reports on them.
// main only turns the real process state into cli.Run's arguments: the signals
// (SIGINT, SIGTERM) as a context, whether standard output is a terminal and its width,
// the environment, and the version and commit the Makefile sets with -ldflags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/dbperf/dbperf/internal/cli"
)

// Set by the Makefile with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C dbperf stops cleanly; a second one kills it at once.
		<-ctx.Done()
		stop()
	}()
	isTerminal := term.IsTerminal(int(os.Stdout.Fd()))
	columns := 0
	if isTerminal {
		columns, _, _ = term.GetSize(int(os.Stdout.Fd()))
	}
	code := cli.Run(ctx, cli.Env{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Getenv:     os.Getenv,
		IsTerminal: isTerminal, Columns: columns,
		Version: version, Commit: commit,
	}, os.Args[1:])
	stop()
	os.Exit(code)
}
