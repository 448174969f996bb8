package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
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

// explainFlagErr rewords the flag package's errors in the spelling of
// the docs and of --help: "flag provided but not defined: -durtion" as
// "unknown flag --durtion (did you mean --duration?)", "invalid value
// "5" for flag -duration: …" as "invalid value "5" for --duration: …",
// and so on for each error that names a flag (one-letter flags keep
// their one dash, as in --help).
func explainFlagErr(err error, names []string) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, undefinedFlag); ok {
		if best, ok := scenario.Closest(name, names); ok {
			return fmt.Errorf("unknown flag --%s (did you mean --%s?)", name, best)
		}
		return fmt.Errorf("unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("flag %s needs an argument", dashed(name))
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean flag "); ok {
		name, why, _ := strings.Cut(rest, ": ")
		return fmt.Errorf("invalid boolean flag %s: %s", dashed(name), why)
	}
	for _, form := range []struct{ lead, mid, say string }{
		{"invalid value ", " for flag -", "invalid value %s for %s: %s"},
		{"invalid boolean value ", " for -", "invalid boolean value %s for %s: %s"},
	} {
		rest, ok := strings.CutPrefix(msg, form.lead)
		if !ok {
			continue
		}
		// The value is quoted (%q): whatever it holds, its end is known.
		value, err := strconv.QuotedPrefix(rest)
		if err != nil {
			break
		}
		if rest, ok = strings.CutPrefix(rest[len(value):], form.mid); ok {
			name, why, _ := strings.Cut(rest, ": ")
			return fmt.Errorf(form.say, value, dashed(name), why)
		}
	}
	return err
}

// dashed is a flag's name as the docs and --help spell it: --duration,
// but -o.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
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
// lobbybench to (a tcp-lobby GAME_START's game instance), into p. Its value
// is parsed by allowRedirect.
func allowRedirectFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "allow-redirect", "", "`hosts` (comma-separated, or \"any\") besides the target's own that the server may send clients to (a GAME_START's game instance); default: only the target's host")
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

// internal declares a flag one lobbybench process passes another (a
// --workers parent its workers): parsed like any other, left out of
// --help, where it would only invite a user to set it. decl is the
// flag set's own declaring method (fs.Bool, fs.String):
//
//	worker := internal(fs, fs.Bool, "worker", false, "…")
func internal[T any](fs *flag.FlagSet, decl func(name string, value T, usage string) *T, name string, value T, usage string) *T {
	p := decl(name, value, usage)
	markInternal(fs, name)
	return p
}

// markInternal makes fs's flag name internal (see internal), for a flag
// declared with the flag set's Var methods (fs.BoolVar(&o.worker, …)).
func markInternal(fs *flag.FlagSet, name string) {
	f := fs.Lookup(name)
	f.Value = internalValue{f.Value}
}

// internalValue marks an internal flag's value (internal); it behaves as
// the value it wraps.
type internalValue struct{ flag.Value }

func (v internalValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v internalValue) Get() any {
	if g, ok := v.Value.(flag.Getter); ok {
		return g.Get()
	}
	return v.Value.String()
}

// isInternal reports whether f was declared by internal.
func isInternal(f *flag.Flag) bool {
	_, ok := f.Value.(internalValue)
	return ok
}
