package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"
// (make dist and the container images do); it wins over the build info.
var version = "dev"

// versionText is what `lobbybench version` prints: the version, then the
// commit it was built from, read from the build info the go command embeds.
//
// The version is the -X stamped one, else the main module's version in the
// build info (v1.2.3 after `go install ...@v1.2.3`; since Go 1.24 a build in
// a checkout gets one from the VCS tag or commit, "+dirty" when modified),
// else "dev". The revision, its commit time and whether the tree had
// uncommitted changes come from the vcs.* settings, which a build records
// in a VCS checkout unless -buildvcs=false; without them the line says so.
func versionText(stamped string, bi *debug.BuildInfo, goVersion, goos, goarch string) string {
	v := stamped
	if v == "" || v == "dev" {
		v = "dev"
		if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lobbybench %s %s %s/%s\n", v, goVersion, goos, goarch)

	var rev, at, modified string
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if rev == "" {
		b.WriteString("revision unknown (built without VCS information)\n")
		return b.String()
	}
	b.WriteString("revision " + rev)
	switch modified {
	case "true":
		b.WriteString(" (modified: uncommitted changes)")
	case "false":
		b.WriteString(" (clean)")
	}
	b.WriteString("\n")
	if at != "" {
		b.WriteString("committed " + at + "\n")
	}
	return b.String()
}

func init() {
	register("version", command{
		summary: "print the lobbybench version and the commit it was built from",
		usage:   "Usage: lobbybench version",
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			return func(_ context.Context, e *env, args []string) int {
				if len(args) > 0 {
					return usageErr(e, "version", "unexpected argument %q", args[0])
				}
				bi, _ := debug.ReadBuildInfo()
				fmt.Fprint(e.stdout, versionText(version, bi, runtime.Version(), runtime.GOOS, runtime.GOARCH))
				return exitOK
			}
		},
	})
}
