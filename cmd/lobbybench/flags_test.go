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
