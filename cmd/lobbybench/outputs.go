package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// outputs are the result files a command offers, one flag per format of
// the registry (reports.Formats): run's and conform's --json, --junit,
// --markdown, --html, and whatever format comes next.
type outputs struct {
	formats []reports.Format
	paths   []*string // by format; "" not asked for, "-" standard output
	// stdout is where a format given "-" writes: the command's standard
	// output, taken by check from the command's own text.
	stdout io.Writer
	// wrote is set once write was called (whether every file was
	// written or not): settle then has nothing to do.
	wrote bool
}

// stdoutPath is the path that names standard output, as report's -o.
const stdoutPath = "-"

// outputFlags defines --NAME FILE on fs for every format, with the help
// the format gives for kind (result.KindRun, result.KindConform).
func outputFlags(fs *flag.FlagSet, kind string) *outputs {
	o := &outputs{formats: reports.Formats()}
	for _, f := range o.formats {
		o.paths = append(o.paths, fs.String(f.Name, "", f.Help[kind]))
	}
	return o
}

// path is the file asked for in format name ("" none).
func (o *outputs) path(name string) string {
	for i, f := range o.formats {
		if f.Name == name {
			return *o.paths[i]
		}
	}
	return ""
}

// check finds a path that cannot be written before anything runs (a
// usage error naming the flag): no two formats may go to the same file
// (after cleaning the path) or both to standard output ("-"), no path
// may name an existing directory or anything else but a file, and each
// path's directory must exist and take a new file. Nothing is left
// behind. When a format writes to standard output, check takes it from
// the command: e's text (the table, the summary) goes to standard error
// from then on, so that standard output holds the format alone.
func (o *outputs) check(e *env) error {
	seen := map[string]string{} // cleaned path → flag
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" {
			continue
		}
		key := filepath.Clean(path)
		if abs, err := filepath.Abs(path); err == nil && path != stdoutPath {
			key = abs
		}
		if first, dup := seen[key]; dup {
			if path == stdoutPath {
				return fmt.Errorf("--%s and --%s both write to standard output (-): one output holds one format", first, f.Name)
			}
			return fmt.Errorf("--%s and --%s both write %q: one file holds one format", first, f.Name, path)
		}
		seen[key] = f.Name
	}
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" || path == stdoutPath {
			continue
		}
		if err := checkPath(path); err != nil {
			return fmt.Errorf("--%s: %v", f.Name, err)
		}
	}
	if _, ok := seen[stdoutPath]; ok {
		o.stdout, e.stdout = e.stdout, e.stderr
	}
	return nil
}

// checkPath reports why path cannot take a result file.
func checkPath(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("directory of %q does not exist", path)
	}
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.IsDir():
			return fmt.Errorf("%q is a directory: give a file name in it", path)
		case !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0:
			return fmt.Errorf("%q exists and is not a file (%v)", path, fi.Mode().Type())
		}
	}
	t, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("cannot write %q: %v", path, err)
	}
	t.Close()
	os.Remove(t.Name())
	return nil
}

// write writes doc in every format asked for, each through writeFile,
// whatever the others do; a failure is reported on stderr naming the
// flag. It reports whether all were written.
func (o *outputs) write(e *env, cmd string, doc result.Doc, opts reports.Options) bool {
	o.wrote = true
	ok := true
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" {
			continue
		}
		render := func(w io.Writer) error { return f.Write(w, opts, doc) }
		var err error
		if path == stdoutPath {
			err = render(o.stdout)
		} else {
			err = writeFile(path, render)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "lobbybench %s: --%s: %v\n", cmd, f.Name, err)
			ok = false
		}
	}
	return ok
}

// settle writes, when the command ends with *code 3 (unreachable) or 5
// (interrupted) and wrote no result, the document doc makes of a
// NotStarted that says so in every format asked for: a result file of an
// earlier run must never be left where CI reads this one's. The reason
// is the one the command kept (env.notStarted), or its exit code. A
// usage error (2) writes nothing: it is the invocation to fix, found
// before anything ran. Deferred once the paths are checked.
func (o *outputs) settle(e *env, cmd string, code *int, doc func(*result.NotStarted) result.Doc) {
	status := map[int]string{exitUnreachable: result.StatusUnreachable, exitInterrupted: result.StatusInterrupted}[*code]
	if o.wrote || status == "" {
		return
	}
	reason := e.notStarted
	if reason == "" {
		reason = fmt.Sprintf("lobbybench %s ended with exit code %d before it measured anything (its standard error says why)", cmd, *code)
	}
	o.write(e, cmd, doc(&result.NotStarted{Status: status, Reason: reason}), reports.Options{})
}

// writeOutput renders to stdout when path is "" or "-", otherwise to
// path through writeFile (report's -o).
func writeOutput(e *env, path string, render func(io.Writer) error) error {
	if path == "" || path == stdoutPath {
		return render(e.stdout)
	}
	return writeFile(path, render)
}

// writeFile renders to a temporary file beside path, renamed onto it once
// complete: no half-written result is ever left where CI looks for it
// (a --workers parent reads its workers' --json only once whole). Every
// result file any command writes goes through it. A file it replaces
// keeps its permissions (a new one is 0644), and the temporary files of
// path that an earlier process left (killed mid-write) are removed.
func writeFile(path string, render func(io.Writer) error) error {
	removeStaleTemps(path, processStart)
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return err
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// tempPattern is the os.CreateTemp pattern of path's temporary files:
// ".NAME.<digits>.tmp" beside it.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".*.tmp" }

// processStart is when this process began: a temporary file of ours not
// touched since was left by an earlier process, as every write renders
// its file within moments of creating it.
var processStart = time.Now()

// removeStaleTemps removes path's temporary files (tempPattern, with
// os.CreateTemp's digits, beside path: no other file) last modified
// before since.
func removeStaleTemps(path string, since time.Time) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+"."
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		name := ent.Name()
		rest, ours := strings.CutPrefix(name, prefix)
		digits, tmp := strings.CutSuffix(rest, ".tmp")
		if !ours || !tmp || digits == "" || strings.Trim(digits, "0123456789") != "" || !ent.Type().IsRegular() {
			continue
		}
		if fi, err := ent.Info(); err == nil && fi.ModTime().Before(since) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}
