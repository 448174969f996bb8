package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// output is one result file a command was asked for by a flag (run's and
// conform's --json, --junit, --markdown, --html): the flag, the path ("":
// not asked for) and how to render it.
type output struct {
	flag, path string
	write      func(io.Writer) error
}

// checkOutputs finds a path that cannot be written before anything runs
// (a usage error naming the flag): each path's directory must exist and
// take a new file. Nothing is left behind.
func checkOutputs(outs []output) error {
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		dir := filepath.Dir(o.path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--%s: directory of %q does not exist", o.flag, o.path)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(o.path)+".*.tmp")
		if err != nil {
			return fmt.Errorf("--%s: cannot write %q: %v", o.flag, o.path, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// writeOutputs writes every output asked for, each through writeFile,
// whatever the others do; a failure is reported on stderr naming the
// flag. It reports whether all were written.
func writeOutputs(e *env, cmd string, outs []output) bool {
	ok := true
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := writeFile(o.path, o.write); err != nil {
			fmt.Fprintf(e.stderr, "lobbybench %s: --%s: %v\n", cmd, o.flag, err)
			ok = false
		}
	}
	return ok
}

// writeOutput renders to stdout when path is "" or "-", otherwise to
// path through writeFile (report's -o).
func writeOutput(e *env, path string, render func(io.Writer) error) error {
	if path == "" || path == "-" {
		return render(e.stdout)
	}
	return writeFile(path, render)
}

// writeFile renders to a temporary file beside path, renamed onto it once
// complete: no half-written result is ever left where CI looks for it
// (a --workers parent reads its workers' --json only once whole).
func writeFile(path string, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = render(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
