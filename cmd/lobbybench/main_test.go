package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/reports"
)

// runCLI runs the whole command line in-process and returns its exit code
// and output streams.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := runMain(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// dispatchCase is one command line and what it must produce.
type dispatchCase struct {
	name    string
	args    []string
	code    int
	stdout  string // substring expected on stdout
	stderr  string // substring expected on stderr
	oneLine bool   // stderr must be exactly one line
}

func TestDispatch(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string // substring expected on stdout
		stderr  string // substring expected on stderr
		oneLine bool   // stderr must be exactly one line
	}{
		{"no args prints usage", nil, exitUsage, "", "Commands:", false},
		{"help", []string{"--help"}, exitOK, "Commands:", "", false},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`, true},
		{"version", []string{"version"}, exitOK, "lobbybench ", "", false},
		{"--version alias", []string{"--version"}, exitOK, "lobbybench ", "", false},
		{"version extra arg", []string{"version", "x"}, exitUsage, "", "unexpected argument", true},
		{"unknown flag", []string{"version", "--nope"}, exitUsage, "", "unknown flag --nope", true},
		{"mistyped command", []string{"runn", "x.yaml"}, exitUsage, "", `unknown command "runn"; did you mean "run"?`, true},
		{"mistyped command, other case", []string{"Conform"}, exitUsage, "", `unknown command "Conform"; did you mean "conform"?`, true},
		{"mistyped report subcommand", []string{"report", "jnuit", "x.json"}, exitUsage, "", `unknown subcommand "jnuit"; did you mean "junit"?`, true},
		{"unknown report subcommand", []string{"report", "zzzzz"}, exitUsage, "", `unknown subcommand "zzzzz" (want html`, true},
	}
	for _, cmd := range []string{"run", "conform", "serve", "report", "version"} {
		tests = append(tests, dispatchCase{cmd + " --help", []string{cmd, "--help"}, exitOK, "Usage: lobbybench " + cmd, "", false})
		tests = append(tests, dispatchCase{cmd + " unknown flag", []string{cmd, "--definitely-not-a-flag"}, exitUsage, "", "-definitely-not-a-flag", true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.code, errs)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out, tt.stdout)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errs, tt.stderr)
			}
			if tt.oneLine && strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", errs)
			}
		})
	}
}

// TestHelpDoubleDash: every command's and report subcommand's --help spells
// long flags with two dashes, as the docs and the error messages do; only
// one-letter flags (-o) keep one.
func TestHelpDoubleDash(t *testing.T) {
	var cmds [][]string
	for name, c := range commands {
		cmds = append(cmds, []string{name, "--help"})
		if c.subcommands {
			for _, s := range reportSubs() {
				cmds = append(cmds, []string{name, s.name, "--help"})
			}
		}
	}
	for _, args := range cmds {
		t.Run(strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
			code, out, errs := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			flags := 0
			for _, l := range strings.Split(out, "\n") {
				name, ok := strings.CutPrefix(l, "  -")
				if !ok {
					continue
				}
				flags++
				if word, _, _ := strings.Cut(name, " "); len(word) > 1 && !strings.HasPrefix(word, "-") {
					t.Errorf("flag printed with one dash: %q", l)
				}
			}
			if flags == 0 && strings.Contains(out, "Flags:") {
				t.Errorf("no flag lines under Flags:\n%s", out)
			}
		})
	}
}

// TestSameOutputTwice: run and conform refuse two formats into one file
// before anything is sent (exit 2, one line naming both flags).
func TestSameOutputTwice(t *testing.T) {
	scen, err := filepath.Abs("../../scenarios/list-poll.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"run, same file after cleaning", []string{"run", scen, "--duration", "100ms", "--json", "r.out", "--html", "./r.out"}, `lobbybench run: --json and --html both write "./r.out"`},
		{"conform, both to stdout", []string{"conform", "--target", "127.0.0.1:9", "--junit", "-", "--markdown", "-"}, `lobbybench conform: --junit and --markdown both write to standard output (-)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, errs, exitUsage, tt.want)
			}
		})
	}
}

// failWriter fails every write, as the bar's container does once it ended.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("done") }

// TestSayAboveBar: the Ctrl-C messages go above a live progress bar (the
// leading newline that leaves the bar's line dropped), and to stderr as
// they are when there is no bar or it just ended.
func TestSayAboveBar(t *testing.T) {
	const msg = "\nlobbybench: stopping: x. Ctrl-C again to stop at once.\n"
	for _, tt := range []struct {
		name              string
		notes             bool
		above             io.Writer
		wantErr, wantAbov string
	}{
		{"no progress writer", false, nil, msg, ""},
		{"no bar drawn", true, nil, msg, ""},
		{"bar drawn", true, &bytes.Buffer{}, "", lineStart + strings.TrimPrefix(msg, "\n")},
		{"bar just ended", true, failWriter{}, msg, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			e := &env{stderr: &errb}
			if tt.notes {
				e.notes = &barNotes{stderr: &errb}
				e.notes.SetAbove(tt.above)
			}
			e.say(msg)
			if errb.String() != tt.wantErr {
				t.Errorf("stderr %q, want %q", errb.String(), tt.wantErr)
			}
			if b, ok := tt.above.(*bytes.Buffer); ok && b.String() != tt.wantAbov {
				t.Errorf("above the bar %q, want %q", b.String(), tt.wantAbov)
			}
		})
	}
}

// TestStopLineFolds: the Ctrl-C notes fold at the report's 80 columns
// with an indent, at spaces, so a terminal never breaks them mid-flag
// ("(--" then "grace)"); a short one stays one line.
func TestStopLineFolds(t *testing.T) {
	for _, tt := range []struct {
		name, note string
		lines      int
	}{
		{"short", "lobbybench: stopping: finishing up. Ctrl-C again to stop at once.", 1},
		{"the run's", "lobbybench: stopping: no new session starts; requests in flight get up to 3s (--grace) to finish, then the results are written. Ctrl-C again to stop at once.", 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := stopLine(tt.note)
			rows := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(rows) != tt.lines || !strings.HasSuffix(got, "\n") {
				t.Fatalf("%d lines, want %d:\n%s", len(rows), tt.lines, got)
			}
			for i, r := range rows {
				if len(r) > reports.TermWidth || i > 0 && !strings.HasPrefix(r, "  ") {
					t.Errorf("line %d %q: over %d columns or not indented", i, r, reports.TermWidth)
				}
			}
			if strings.Join(strings.Fields(got), " ") != tt.note || strings.Contains(got, "(--\n") {
				t.Errorf("the note changed or broke mid-flag:\n%s", got)
			}
		})
	}
}
