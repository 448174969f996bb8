package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// outputs are the result files a command offers, one flag per format of
// the registry (reports.Formats): run's and conform's --json, --junit,
// --markdown, --html, and whatever format comes next.
type outputs struct {
	formats []reports.Format
	paths   []*string // by format; "" not asked for
}

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
// (after cleaning the path; "-" is one path like any other), and each
// path's directory must exist and take a new file. Nothing is left behind.
func (o *outputs) check() error {
	seen := map[string]string{} // cleaned path → flag
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" {
			continue
		}
		key := filepath.Clean(path)
		if abs, err := filepath.Abs(path); err == nil && path != "-" {
			key = abs
		}
		if first, dup := seen[key]; dup {
			return fmt.Errorf("--%s and --%s both write %q: one file holds one format", first, f.Name, path)
		}
		seen[key] = f.Name
	}
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" {
			continue
		}
		dir := filepath.Dir(path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("--%s: directory of %q does not exist", f.Name, path)
		}
		t, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
		if err != nil {
			return fmt.Errorf("--%s: cannot write %q: %v", f.Name, path, err)
		}
		t.Close()
		os.Remove(t.Name())
	}
	return nil
}

// write writes doc in every format asked for, each through writeFile,
// whatever the others do; a failure is reported on stderr naming the
// flag. It reports whether all were written.
func (o *outputs) write(e *env, cmd string, doc result.Doc, opts reports.Options) bool {
	ok := true
	for i, f := range o.formats {
		path := *o.paths[i]
		if path == "" {
			continue
		}
		if err := writeFile(path, func(w io.Writer) error { return f.Write(w, opts, doc) }); err != nil {
			fmt.Fprintf(e.stderr, "lobbybench %s: --%s: %v\n", cmd, f.Name, err)
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
// (a --workers parent reads its workers' --json only once whole). Every
// result file any command writes goes through it.
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
