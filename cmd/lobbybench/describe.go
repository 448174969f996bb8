package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/scenario"
)

const describeUsage = `Usage: lobbybench describe [flags] SCENARIO.yaml

A dry run: prints what 'lobbybench run' would do with the scenario and the
same flags, without sending anything or starting a server. First the plan
(target, protocol, load, flows and their steps, thresholds), then a
forecast worked out from it: the duration, the sessions the schedule starts
(expected, with Poisson arrivals) and its peak, the session's own pauses,
the clients alive at the peak (the open model: peak rate × session pauses,
Little's law), the sockets (none a client on virtual flows: --flows,
flows_mode) and open files needed against this machine's limit, and the
rooms created and held at once against the server's room limit (the
embedded server's; with --target the reference server's defaults, as a
target's limit cannot be known without asking it).

A broken scenario is listed as file:line: message, one problem per line
(exit 2), as run lists it. Exit codes: 0 described; 2 invalid usage, flags
or scenario.`

func init() {
	register("describe", command{
		summary: "print what a scenario will do (a dry run: nothing is sent)",
		usage:   describeUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			var (
				o    scenario.Overrides
				seed seedFlag
			)
			addTargetSeedFlags(fs, &o, &seed)
			addLoadFlags(fs, &o)
			addFlowsFlag(fs, &o)
			return func(_ context.Context, e *env, args []string) int {
				if len(args) != 1 {
					return usageErr(e, "describe", "want exactly one SCENARIO.yaml argument, got %d", len(args))
				}
				o.Seed = seed.v
				given := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
				if err := checkLoadFlags(given, o); err != nil {
					return usageErr(e, "describe", "%v", err)
				}
				plan, bad := loadPlan(e, "describe", args[0], o)
				if plan == nil {
					return bad
				}
				f, err := engine.NewForecast(plan)
				if err != nil {
					return usageErr(e, "describe", "%v", err)
				}
				if err := plan.Describe(e.stdout); err != nil {
					fmt.Fprintf(e.stderr, "lobbybench describe: %v\n", err)
					return exitUsage
				}
				if err := f.Write(e.stdout); err != nil {
					fmt.Fprintf(e.stderr, "lobbybench describe: %v\n", err)
					return exitUsage
				}
				return exitOK
			}
		},
	})
}
