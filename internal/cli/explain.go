package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbperf/dbperf/internal/report"
	"github.com/dbperf/dbperf/internal/report/render"
)

func newExplainCmd(env Env) *cobra.Command {
	var results, format, step, role string
	var top int
	cmd := &cobra.Command{
		Use:   "explain BASE NEW",
		Short: "Say why a step changed between two configs: CPU per function, statements, plans and waits (dbperf run --cpu-profile DIR --explain)",
		Long: `Compare what two configs' runs recorded about each step: CPU profiles (dbperf run
--cpu-profile DIR) and the server's statements, plans and waits (dbperf run --explain).
BASE and NEW are run ids or labels, as in dbperf report; a label's runs are summed.

Steps come in order of their rate's change, largest first. For each, per role (a
worker's connection, background:<name>, client), largest change first: the role's CPU µs
per operation (samples ÷ the sampling rate ÷ the step's primary operations) and the
functions whose µs/op changed most: by self CPU (the function is the leaf frame) and by
total CPU (the function is anywhere on the stack, counted once per stack); base and new
µs/op, the change in µs/op and in %, and the share of the role's change each explains.
Then the statements whose planning plus execution µs per operation changed most, with
their per-call figures and any plan change side by side, and each role's wait shares.
The top N by absolute change, per kind. docs/profiles.md.`,
		Example: `  dbperf explain base new
  dbperf explain 12 15 --step l.i1 --role delete --top 5
  dbperf explain base new --format json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := lookupFormat(render.ExplainFormats(), format)
			if err != nil {
				return err
			}
			if top < 1 {
				return badInput(fmt.Errorf("--top must be at least 1, got %d", top))
			}
			ctx := cmd.Context()
			st, err := openResults(ctx, results, env)
			if err != nil {
				return err
			}
			defer st.Close()
			groups, err := report.ResolveGroups(ctx, st, args)
			if err != nil {
				return badInput(err)
			}
			e, err := report.LoadExplain(ctx, st, groups[0], groups[1],
				report.ExplainOptions{Step: strings.TrimSpace(step), Role: strings.TrimSpace(role), Top: top})
			if err != nil {
				return badInput(err)
			}
			return f.Render(env.Out, e, render.Options{})
		},
	}
	cmd.Flags().StringVar(&results, "results", "", resultsUsage)
	cmd.Flags().StringVar(&format, "format", "text", "output format: "+strings.Join(render.Names(render.ExplainFormats()), ", "))
	cmd.Flags().StringVar(&step, "step", "", "only this step")
	cmd.Flags().StringVar(&role, "role", "", "only this role (insert, delete, query, background:walwriter, client, …)")
	cmd.Flags().IntVar(&top, "top", report.DefaultExplainTop, "functions per role and kind (self, total), and statements per step")
	return cmd
}
