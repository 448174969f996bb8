package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func init() {
	register("version", command{
		summary: "print the lobbybench version",
		usage:   "Usage: lobbybench version",
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			return func(_ context.Context, e *env, args []string) int {
				if len(args) > 0 {
					return usageErr(e, "version", "unexpected argument %q", args[0])
				}
				v := version
				if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" {
					for _, s := range bi.Settings {
						if s.Key == "vcs.revision" && len(s.Value) >= 12 {
							v = "dev+" + s.Value[:12]
						}
					}
				}
				fmt.Fprintf(e.stdout, "lobbybench %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return exitOK
			}
		},
	})
}
