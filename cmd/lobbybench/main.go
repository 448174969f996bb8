// Command lobbybench load-tests and conformance-checks game lobby servers.
//
// This package only parses flags and wires the library packages together;
// everything it runs lives in engine/, conformance/, refserver/ and
// reports/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
)

// Exit codes, stable for CI (documented in the README's table).
const (
	exitOK          = 0 // all good
	exitFailed      = 1 // violations or conformance failures
	exitUsage       = 2 // invalid usage, flags or scenario
	exitUnreachable = 3 // target unreachable
	exitThreshold   = 4 // a threshold or regression gate breached
	exitInterrupted = 5 // interrupted by a signal or deadline
	exitIncomplete  = 6 // the load was not all generated: failed starts, a dead worker
	exitTargetDown  = 7 // the target stopped answering (refused or silent) during the run or suite
	// exitInconclusive: every breached threshold is harness-bound (the
	// harness's own send lag explains it, result.Run.HarnessBound):
	// nothing shows the server slow, nothing shows it fast enough.
	exitInconclusive = 8
	// exitNotWritten: the verdict was all good but a result file asked
	// for could not be written (a full disk): see withOutputs.
	exitNotWritten = 9
)

// withOutputs is the exit code of a command whose verdict is code once
// its result files are written (wrote false: one or more failed, each
// named on stderr). A verdict other than all good stands, the stronger
// news; a pass whose files are lost is no pass, and no usage error (the
// paths were checked before anything ran), so it exits 9.
func withOutputs(code int, wrote bool) int {
	if code == exitOK && !wrote {
		return exitNotWritten
	}
	return code
}

// env is the state a command runs with, injected so whole commands can be
// tested in-process (k6's habit).
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// abort is closed on a second Ctrl-C: stop at once (nil in tests).
	abort <-chan struct{}
	// sigMu guards stopNote and notes, which a command sets while the
	// signal goroutine (handleSignals) may read them (nil in tests, which
	// have no signal goroutine). A pointer: copies of env share it.
	sigMu *sync.Mutex
	// stopNote, when a command sets it (setStopNote), says on the first
	// Ctrl-C what the command waits for before it exits.
	stopNote func() string
	// notes, when a command sets it (setNotes), prints the Ctrl-C
	// messages above its progress bar (run).
	notes *barNotes
	// onQuit, when a command sets it, runs before a third Ctrl-C quits on
	// the spot: it stops a server the command started (--target-cmd).
	// Nil in tests.
	onQuit *atomic.Pointer[func()]
	// notStarted is why the command ended before its run began (the
	// target unreachable, a Ctrl-C before the start), kept by the step
	// that said so on stderr: the reason outputs.settle writes in the
	// result files.
	notStarted string
}

// barNotes is a progress writer (stderr) that also prints notes above a
// live progress bar, which would erase them on its next redraw if they
// were written under it: the engine hands it the bar's container while
// the bar is drawn (engine.BarNotes).
type barNotes struct {
	stderr io.Writer
	mu     sync.Mutex
	above  io.Writer
}

func (n *barNotes) Write(b []byte) (int, error) { return n.stderr.Write(b) }
func (n *barNotes) Terminal() io.Writer         { return n.stderr }

func (n *barNotes) SetAbove(w io.Writer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.above = w
}

// lineStart is a carriage return and a line clear: what a note above the
// bar starts with. The terminal echoes the Ctrl-C ("^C") where the cursor
// is, under the bar, and the bar's redraw moves up a line without going
// back to column 0 and clears from there: a note written then would start
// two columns in, after what is left of the bar's line
// ("5slobbybench: stopping: …").
const lineStart = "\r\x1b[K"

// say prints msg above the bar while there is one, else on stderr as is.
// Above the bar, a leading newline (there to leave the bar's line) is
// dropped and the note starts at column 0 of a clean line (lineStart); a
// bar that ends meanwhile makes the write fail, and the note goes to
// stderr.
func (e *env) say(msg string) {
	unlock := e.lockSig()
	n := e.notes
	unlock()
	if n != nil {
		n.mu.Lock()
		above := n.above
		n.mu.Unlock()
		if above != nil {
			if _, err := io.WriteString(above, lineStart+strings.TrimLeft(msg, "\n")); err == nil {
				return
			}
		}
	}
	io.WriteString(e.stderr, msg)
}

// stopLine is a Ctrl-C note folded to the report's 80 columns, its
// continuation lines indented, as every line of the report is: a terminal
// would otherwise break it wherever the 80th column falls ("(--" and
// "grace)").
func stopLine(s string) string {
	return strings.Join(words.Wrap(s, reports.TermWidth, 2), "\n") + "\n"
}

// setStopNote sets what the first Ctrl-C says the command waits for.
func (e *env) setStopNote(f func() string) {
	defer e.lockSig()()
	e.stopNote = f
}

// stopNoteFunc returns what setStopNote set (nil: nothing).
func (e *env) stopNoteFunc() func() string {
	defer e.lockSig()()
	return e.stopNote
}

// setNotes makes n the writer say prints the Ctrl-C messages through.
func (e *env) setNotes(n *barNotes) {
	defer e.lockSig()()
	e.notes = n
}

// lockSig locks sigMu, when there is one, and returns its unlock.
func (e *env) lockSig() func() {
	if e.sigMu == nil {
		return func() {}
	}
	e.sigMu.Lock()
	return e.sigMu.Unlock
}

// setOnQuit sets (nil: clears) what a third Ctrl-C runs before it quits.
func (e *env) setOnQuit(f func()) {
	if e.onQuit == nil {
		return
	}
	if f == nil {
		e.onQuit.Store(nil)
		return
	}
	e.onQuit.Store(&f)
}

// command is one subcommand: its flag set, one-line summary and the function
// that runs it with the arguments left after flag parsing.
type command struct {
	summary string
	usage   string
	flags   func(fs *flag.FlagSet) func(ctx context.Context, e *env, args []string) int
	// subcommands: the arguments after the first positional belong to a
	// subcommand that parses its own flags (report).
	subcommands bool
}

var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

const mainUsage = `lobbybench: load-testing and conformance harness for game lobby servers.

Usage:
  lobbybench <command> [flags] [args]   (flags may also follow the args)

Commands:
%s
Run 'lobbybench help <command>' (or '<command> --help') for a command's flags;
'lobbybench -v' prints the version.
`

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	abort := make(chan struct{})
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, abort: abort, onQuit: new(atomic.Pointer[func()]), sigMu: new(sync.Mutex)}
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go handleSignals(sigs, e, cancel, abort)
	code := runMain(ctx, e, os.Args[1:])
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

// handleSignals: the first Ctrl-C (or SIGTERM) stops the command the
// normal way and says what it waits for; the second stops at once, still
// writing what was measured; a third exits on the spot.
func handleSignals(sigs <-chan os.Signal, e *env, cancel func(), abort chan<- struct{}) {
	<-sigs
	note := "finishing up"
	if f := e.stopNoteFunc(); f != nil {
		note = f()
	}
	e.say("\n" + stopLine(fmt.Sprintf("lobbybench: stopping: %s. Ctrl-C again to stop at once.", note)))
	cancel()
	<-sigs
	e.say(stopLine("lobbybench: stopping now: in-flight requests are cut; what was measured is still written. Ctrl-C again to quit without it."))
	close(abort)
	<-sigs
	fmt.Fprintln(e.stderr, "lobbybench: quit")
	if e.onQuit != nil {
		if f := e.onQuit.Load(); f != nil {
			(*f)()
		}
	}
	os.Exit(exitInterrupted)
}

func usageText() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-9s %s\n", n, commands[n].summary)
	}
	return fmt.Sprintf(mainUsage, b.String())
}

// runMain dispatches to a subcommand and returns the process exit code.
func runMain(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText())
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			// `help run` is `run --help` (git's habit).
			args = []string{args[1], "--help"}
			break
		}
		fmt.Fprint(e.stdout, usageText())
		return exitOK
	case "-v", "-version", "--version":
		args = []string{"version"}
	}
	c, ok := commands[args[0]]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(e.stderr, "lobbybench: unknown command %q%s\n", args[0], didYouMean(args[0], names, "run 'lobbybench --help'"))
		return exitUsage
	}
	fs := flag.NewFlagSet("lobbybench "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.flags(fs)
	var pos []string
	var err error
	if c.subcommands {
		err = fs.Parse(args[1:])
		pos = fs.Args()
	} else {
		pos, err = parseFlags(fs, args[1:])
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(e.stdout, args[0], c, fs)
			return exitOK
		}
		fmt.Fprintf(e.stderr, "lobbybench %s: %v (run 'lobbybench %s --help')\n", args[0], err, args[0])
		return exitUsage
	}
	return run(ctx, e, pos)
}

func printCommandHelp(w io.Writer, name string, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s\n", c.summary, strings.TrimSpace(c.usage))
	// The flags a user may set: internal ones (flags.go) are left out.
	shown, hasFlags := flag.NewFlagSet(name, flag.ContinueOnError), false
	fs.VisitAll(func(f *flag.Flag) {
		if !isInternal(f) {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
			hasFlags = true
		}
	})
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		var b strings.Builder
		shown.SetOutput(&b)
		shown.PrintDefaults()
		fmt.Fprint(w, doubleDash(b.String()))
	}
}

// doubleDash rewrites flag.PrintDefaults' "  -duration" as "  --duration",
// the spelling of the docs and of the error messages; one-letter flags
// (-o) keep their single dash. Usage lines start with a tab, never "  -".
func doubleDash(defaults string) string {
	lines := strings.SplitAfter(defaults, "\n")
	for i, l := range lines {
		name, ok := strings.CutPrefix(l, "  -")
		if !ok {
			continue
		}
		if end := strings.IndexAny(name, " \n"); end > 1 || (end < 0 && len(name) > 1) {
			lines[i] = "  --" + name
		}
	}
	return strings.Join(lines, "")
}

// didYouMean is "; did you mean "x"?" when a candidate is close to s (the
// scenario keys' and the flags' own measure, scenario.Closest), otherwise
// " (" + otherwise + ")".
func didYouMean(s string, candidates []string, otherwise string) string {
	if best, ok := scenario.Closest(s, candidates); ok {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return " (" + otherwise + ")"
}

// usageErr prints a one-line usage error for a command and returns exitUsage.
func usageErr(e *env, cmd string, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "lobbybench %s: %s\n", cmd, fmt.Sprintf(format, a...))
	return exitUsage
}
