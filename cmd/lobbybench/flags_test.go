package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args []string
		pos  []string
		o    string
		d    time.Duration
	}{
		{[]string{"a.json"}, []string{"a.json"}, "", 0},
		{[]string{"a.json", "-o", "x", "b.json"}, []string{"a.json", "b.json"}, "x", 0},
		{[]string{"-o", "x", "a.json", "b.json"}, []string{"a.json", "b.json"}, "x", 0},
		{[]string{"a.json", "b.json", "--o=y"}, []string{"a.json", "b.json"}, "y", 0},
		{[]string{"a.json", "--", "-o", "z"}, []string{"a.json", "-o", "z"}, "", 0}, // after --, all positional
		{[]string{"s.yaml", "--d", "5s"}, []string{"s.yaml"}, "", 5 * time.Second},
		{[]string{"--d=-1m30s", "s.yaml"}, []string{"s.yaml"}, "", -90 * time.Second},
		{nil, nil, "", 0},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o := fs.String("o", "", "")
		d := fs.Duration("d", 0, "")
		pos, err := parseFlags(fs, tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if !slices.Equal(pos, tt.pos) || *o != tt.o || *d != tt.d {
			t.Errorf("%v: pos %v o %q d %v, want %v %q %v", tt.args, pos, *o, *d, tt.pos, tt.o, tt.d)
		}
	}
}

// TestFlagHabits: the command line takes what users of k6, kubectl and
// git type, and answers mistakes as the scenario files do.
func TestFlagHabits(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"flags after the scenario", []string{"run", "nope.yaml", "--duration", "5s", "--quiet"}, exitUsage, "", "nope.yaml"},
		{"did you mean", []string{"run", "x.yaml", "--durtion", "5s"}, exitUsage, "", "unknown flag --durtion (did you mean --duration?)"},
		{"no close flag", []string{"run", "--zzzzzzzz"}, exitUsage, "", "unknown flag --zzzzzzzz (run"},
		{"duration without unit", []string{"run", "x.yaml", "--duration", "5"}, exitUsage, "", `duration "5" has no unit (want e.g. 5s or 5ms)`},
		{"conform duration without unit", []string{"conform", "--timeout", "2"}, exitUsage, "", `has no unit`},
		{"help run", []string{"help", "run"}, exitOK, "Usage: lobbybench run", ""},
		{"help report", []string{"help", "report"}, exitOK, "Usage: lobbybench report", ""},
		{"-v", []string{"-v"}, exitOK, "lobbybench ", ""},
		{"report flags after files", []string{"report", "junit", "missing.json", "-o", "/dev/null"}, exitUsage, "", "missing.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errs, tt.stderr) {
				t.Errorf("exit %d stdout %q stderr %q; want exit %d, stdout with %q, stderr with %q", code, out, errs, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
	// --help still names a duration flag's type.
	if _, out, _ := runCLI(t, "run", "--help"); !strings.Contains(out, "-duration duration") {
		t.Errorf("run --help lost the duration type:\n%s", out)
	}
}

// TestFlagErrorsTwoDashes: every error the flag package makes about a
// named flag reaches the user with the flag spelled as --help and the docs
// spell it (--duration; one-letter flags -o), the reason kept.
func TestFlagErrorsTwoDashes(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "5"}, `invalid value "5" for --duration: duration "5" has no unit`},
		{[]string{"--count", "x"}, `invalid value "x" for --count: parse error`},
		{[]string{"--count"}, "flag --count needs an argument"},
		{[]string{"-o"}, "flag -o needs an argument"},
		{[]string{"--quiet=maybe"}, `invalid boolean value "maybe" for --quiet: parse error`},
		{[]string{"--count", `" for flag -x: `}, `invalid value "\" for flag -x: " for --count: parse error`},
		{[]string{"--cuont", "1"}, "unknown flag --cuont (did you mean --count?)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Duration("duration", 0, "")
			fs.Int("count", 0, "")
			fs.Bool("quiet", false, "")
			fs.String("o", "", "")
			_, err := parseFlags(fs, tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
	// Through a command: the user's own example.
	code, _, errs := runCLI(t, "run", "x.yaml", "--duration", "5")
	if code != exitUsage || strings.Contains(errs, " -duration") || !strings.Contains(errs, "--duration") {
		t.Errorf("exit %d, stderr %q: want the flag named --duration", code, errs)
	}
}

// TestHelpHidesInternalFlags: the flags lobbybench passes its own worker
// processes are declared internal and left out of every command's --help,
// while a worker still parses them.
func TestHelpHidesInternalFlags(t *testing.T) {
	internals := 0
	for name, c := range commands {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.flags(fs)
		_, out, _ := runCLI(t, name, "--help")
		fs.VisitAll(func(f *flag.Flag) {
			listed := strings.Contains(out, "\n  "+dashed(f.Name)+" ") || strings.Contains(out, "\n  "+dashed(f.Name)+"\n")
			switch {
			case isInternal(f):
				internals++
				if listed || strings.Contains(out, dashed(f.Name)+" ") {
					t.Errorf("%s --help lists the internal flag %s:\n%s", name, dashed(f.Name), out)
				}
			case !listed:
				t.Errorf("%s --help does not list %s", name, dashed(f.Name))
			}
		})
	}
	if internals < 4 {
		t.Errorf("%d internal flags declared, want at least run's --worker, --worker-metrics, --embedded-at, --capacity-step", internals)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	worker := internal(fs, fs.Bool, "worker", false, "")
	step := internal(fs, fs.String, "capacity-step", "", "")
	if _, err := parseFlags(fs, []string{"--worker", "s.yaml", "--capacity-step", "10:1s"}); err != nil || !*worker || *step != "10:1s" {
		t.Errorf("internal flags parsed: err %v, worker %v, step %q", err, *worker, *step)
	}
}
