package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/scenario"
)

// parseFlags parses a command's flags the way k6, kubectl and docker do:
// placed before, between or after the positional arguments
// (`run scenarios/join-storm.yaml --duration 5s`), which the flag package
// alone stops at; everything after "--" is positional. Duration flags take
// the scenario files' syntax and messages (a bare "5" has no unit), and an
// unknown flag is answered with the nearest known one.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var names []string
	// --help names a flag's type from the flag package's own value: put
	// the originals back once parsed.
	var restore []func()
	defer func() {
		for _, r := range restore {
			r()
		}
	}()
	fs.VisitAll(func(f *flag.Flag) {
		names = append(names, f.Name)
		if g, ok := f.Value.(flag.Getter); ok {
			if _, isDur := g.Get().(time.Duration); isDur {
				orig := f.Value
				f.Value = unitDuration{orig}
				restore = append(restore, func() { f.Value = orig })
			}
		}
	})
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, explainFlagErr(err, names)
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

const undefinedFlag = "flag provided but not defined: -"

// explainFlagErr rewords the flag package's "flag provided but not
// defined: -durtion" as "unknown flag --durtion (did you mean
// --duration?)"; other errors pass unchanged.
func explainFlagErr(err error, names []string) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, undefinedFlag)
	if !ok {
		return err
	}
	if best, ok := scenario.Closest(name, names); ok {
		return fmt.Errorf("unknown flag --%s (did you mean --%s?)", name, best)
	}
	return fmt.Errorf("unknown flag --%s", name)
}

// unitDuration is a duration flag parsed as scenario files parse
// durations (scenario.ParseDuration: one parser, one message), with a
// leading "-" allowed for the flags where a negative value means something
// (each command checks its own bounds).
type unitDuration struct{ inner flag.Value }

func (u unitDuration) String() string {
	if u.inner == nil {
		return ""
	}
	return u.inner.String()
}

func (u unitDuration) Set(s string) error {
	neg := strings.HasPrefix(s, "-")
	d, err := scenario.ParseDuration(strings.TrimPrefix(s, "-"))
	if err != nil {
		return err
	}
	if neg {
		d = -d
	}
	return u.inner.Set(d.String())
}

func (u unitDuration) Get() any { return u.inner.(flag.Getter).Get() }

// allowRedirectFlag declares --allow-redirect, which run, capacity and
// conform take: the hosts besides the target's own that a server may send
// lobbybench to (a tcp-lobby GAME_START's game instance). Its value is
// parsed by allowRedirect.
func allowRedirectFlag(fs *flag.FlagSet) *string {
	return fs.String("allow-redirect", "", "`hosts` (comma-separated, or \"any\") besides the target's own that the server may send clients to (a GAME_START's game instance); default: only the target's host")
}

// allowRedirect parses --allow-redirect's value (target.ParseAllow), the
// error naming the flag.
func allowRedirect(ctx context.Context, v string) (target.Allow, error) {
	a, err := target.ParseAllow(ctx, v)
	if err != nil {
		return a, fmt.Errorf("--allow-redirect: %v", err)
	}
	return a, nil
}
