package main

import (
	"context"
	"flag"
	"fmt"
)

// notYet registers a subcommand whose implementation has not landed yet. It
// exists so the command line is stable; it says so plainly and exits 2.
func notYet(name, summary, usage string) {
	register(name, command{
		summary: summary,
		usage:   usage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			return func(_ context.Context, e *env, _ []string) int {
				fmt.Fprintf(e.stderr, "lobbybench %s: not implemented yet\n", name)
				return exitUsage
			}
		},
	})
}

func init() {
}
