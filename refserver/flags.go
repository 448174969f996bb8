package refserver

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Flags is the flag set serve's parts declare their flags on (Part.Flags).
// A flag two parts read (--countdown-interval: the UDP instances' and the
// TCP lobby's ticks) is declared by the first part, in part order, and read
// by both: a later declaration of the name returns the first one's value,
// with its default and usage, and must be of the same type.
type Flags struct {
	fs   *flag.FlagSet
	vals map[string]any // name → the pointer its value is parsed into
}

// declare returns the pointer of flag name when it was declared (of p's
// type), or defines it with def through define.
func declare[T any](f *Flags, name string, p *T, def T, define func(*T)) *T {
	if prev, ok := f.vals[name]; ok {
		q, same := prev.(*T)
		if !same {
			panic(fmt.Sprintf("refserver: flag --%s declared as %T and as %T", name, prev, p))
		}
		return q
	}
	*p = def
	define(p)
	f.vals[name] = p
	return p
}

// String declares a string flag (or returns the one declared).
func (f *Flags) String(name, def, usage string) *string {
	return declare(f, name, new(string), def, func(p *string) { f.fs.StringVar(p, name, def, usage) })
}

// Int declares an int flag (or returns the one declared).
func (f *Flags) Int(name string, def int, usage string) *int {
	return declare(f, name, new(int), def, func(p *int) { f.fs.IntVar(p, name, def, usage) })
}

// Float64 declares a float64 flag (or returns the one declared).
func (f *Flags) Float64(name string, def float64, usage string) *float64 {
	return declare(f, name, new(float64), def, func(p *float64) { f.fs.Float64Var(p, name, def, usage) })
}

// Duration declares a duration flag (or returns the one declared).
func (f *Flags) Duration(name string, def time.Duration, usage string) *time.Duration {
	return declare(f, name, new(time.Duration), def, func(p *time.Duration) { f.fs.DurationVar(p, name, def, usage) })
}

// Bool declares a bool flag (or returns the one declared).
func (f *Flags) Bool(name string, def bool, usage string) *bool {
	return declare(f, name, new(bool), def, func(p *bool) { f.fs.BoolVar(p, name, def, usage) })
}

// Var declares a flag parsed by v, whose value is the default (or returns
// the value declared before under name, of the same type).
func (f *Flags) Var(v flag.Value, name, usage string) flag.Value {
	if prev, ok := f.vals[name]; ok {
		if reflect.TypeOf(prev) != reflect.TypeOf(v) {
			panic(fmt.Sprintf("refserver: flag --%s declared as %T and as %T", name, prev, v))
		}
		return prev.(flag.Value)
	}
	f.fs.Var(v, name, usage)
	f.vals[name] = v
	return v
}

// Alias declares old as an older name of flag name (declared before): it
// sets the same value, and its usage says "old name of --name".
func (f *Flags) Alias(old, name string) {
	usage := "old name of --" + name
	switch p := f.vals[name].(type) {
	case *string:
		f.fs.StringVar(p, old, *p, usage)
	case *bool:
		f.fs.BoolVar(p, old, *p, usage)
	case *int:
		f.fs.IntVar(p, old, *p, usage)
	default:
		panic(fmt.Sprintf("refserver: alias --%s of --%s (%T)", old, name, p))
	}
	f.vals[old] = f.vals[name]
}

// FlagEnv is what a part's flags are read with (Part.Flags).
type FlagEnv struct {
	// On says the part runs: its flags then make its configuration.
	On bool
	// Provided reports whether a running part provides service.
	Provided func(service string) bool
}

// ServeFlags declares on fs the flags of every registered part
// (Part.Flags) and the flag that turns each off (Part.Off). The function
// returned, called after parsing, makes the server's configuration, or
// returns an error naming the flag.
func ServeFlags(fs *flag.FlagSet) func() (Config, error) {
	f := &Flags{fs: fs, vals: map[string]any{}}
	type declared struct {
		part  *Part
		off   *bool
		build func(FlagEnv) (any, error)
	}
	var all []declared
	for _, p := range registered() {
		d := declared{part: p, build: p.Flags(f)}
		d.off = f.Bool(p.Off.Name, false, p.Off.Usage)
		for _, old := range p.Off.Old {
			f.Alias(old, p.Off.Name)
		}
		all = append(all, d)
	}
	return func() (Config, error) {
		c := Config{Parts: map[string]any{}}
		var offs []string
		provided := map[string]bool{}
		for _, d := range all {
			offs = append(offs, "--"+d.part.Off.Name)
			if !*d.off {
				for _, s := range d.part.Provides {
					provided[s] = true
				}
			}
		}
		if allOff(all, func(d declared) bool { return *d.off }) {
			return c, fmt.Errorf("%s: nothing left to serve", andList(offs))
		}
		for _, d := range all {
			cfg, err := d.build(FlagEnv{On: !*d.off, Provided: func(s string) bool { return provided[s] }})
			if err != nil {
				return c, err
			}
			if !*d.off {
				if cfg == nil {
					return c, errors.New("refserver: part " + d.part.Name + " made no configuration")
				}
				c.Parts[d.part.Name] = cfg
			}
		}
		return c, nil
	}
}

func allOff[T any](all []T, off func(T) bool) bool {
	for _, d := range all {
		if !off(d) {
			return false
		}
	}
	return true
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
