package cli

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/web"
)

// DefaultListen is where `dbperf serve` listens unless --listen says otherwise: loopback.
const DefaultListen = "127.0.0.1:8080"

func newServeCmd(env Env) *cobra.Command {
	var results, listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse, open and compare the stored runs in a web page (read-only)",
		Long: `Serve a web page over the results store: the runs (filter by workload, engine, version,
label, host and date; newest first), one run (what dbperf report RUN --format html shows)
and a comparison of the runs and labels you tick, with a base (the same tables and
charts as dbperf report --format html). Every page's state is in its URL, so a link can
be shared. The store is opened read-only and never changed; runs written meanwhile show
up on the next page load.

It listens on 127.0.0.1 (loopback) unless --listen names another address, and then says
that anyone who can reach the address can read every run. Ctrl-C stops it.

Exit status: 0 stopped, 2 bad input (no store, an address that cannot be listened on).`,
		Example: `  dbperf serve
  dbperf serve --results team.db --listen 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resultsPath(results, env)
			if err != nil {
				return badInput(err)
			}
			return serve(cmd.Context(), env, path, listen)
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringVar(&listen, "listen", DefaultListen, "address to listen on, host:port (port 0: any free one)")
	return cmd
}

func serve(ctx context.Context, env Env, results, listen string) error {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return badInput(fmt.Errorf("--listen %q: give host:port, e.g. %s: %v", listen, DefaultListen, err))
	}
	st, err := openExisting(ctx, results)
	if err != nil {
		return err
	}
	defer st.Close()
	err = web.Serve(ctx, st, web.ServeOptions{Results: results, Listen: listen, Log: env.Err,
		Listening: func(addr net.Addr, loopback bool) {
			if !loopback {
				fmt.Fprintf(env.Err, "warning: serving on %s, not a loopback address: anyone who can reach it can read every run in %s\n", addr, st.Path())
			}
			fmt.Fprintf(env.Out, "serving %s at http://%s/ (read-only; Ctrl-C stops)\n", st.Path(), addr)
		}})
	var le *web.ListenError
	if errors.As(err, &le) {
		return badInput(fmt.Errorf("--listen %s: %w", listen, le.Err))
	}
	return err
}
