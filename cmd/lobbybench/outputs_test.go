package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// TestWriteOutputs: every requested file is written whole (through a
// temporary file renamed into place, none left behind), one that fails
// is named by its flag and leaves nothing, and the others are written
// anyway.
func TestWriteOutputs(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer, reports.Options, ...result.Doc) error {
		return func(w io.Writer, _ reports.Options, _ ...result.Doc) error {
			_, err := io.WriteString(w, s)
			return err
		}
	}
	outs := testOutputs(
		reports.Format{Name: "json", Write: text("{}\n")}, filepath.Join(dir, "r.json"),
		reports.Format{Name: "junit", Write: func(io.Writer, reports.Options, ...result.Doc) error {
			t.Error("an output not asked for was rendered")
			return nil
		}}, "",
		reports.Format{Name: "markdown", Write: func(w io.Writer, _ reports.Options, _ ...result.Doc) error {
			io.WriteString(w, "half")
			return errors.New("renderer broke")
		}}, filepath.Join(dir, "r.md"),
		reports.Format{Name: "html", Write: text("<html>")}, filepath.Join(dir, "r.html"),
	)
	if err := outs.check(); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &errb}
	if outs.write(e, "run", result.NewRun(), reports.Options{}) {
		t.Error("a failed output reported as written")
	}
	if got := errb.String(); got != "lobbybench run: --markdown: renderer broke\n" {
		t.Errorf("stderr %q", got)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "r.html r.json" {
		t.Errorf("directory holds %v, want r.html r.json (a temporary or half-written file left behind?)", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "r.html")); string(b) != "<html>" {
		t.Errorf("r.html = %q", b)
	}
}

// TestCheckOutputs: a path whose directory is missing, or not a
// directory, is an error naming the flag, found before anything runs; a
// good one leaves nothing behind.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing", "r.md"), "--markdown: directory of"},
		{filepath.Join(file, "r.md"), "--markdown: directory of"},
		{filepath.Join(dir, "r.md"), ""},
	} {
		err := testOutputs(reports.Format{Name: "markdown"}, tt.path).check()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the check left %d entries, want only f", len(ents))
	}
}

// testOutputs is outputs over the given formats, each followed by its
// path.
func testOutputs(fp ...any) *outputs {
	o := &outputs{}
	for i := 0; i < len(fp); i += 2 {
		path := fp[i+1].(string)
		o.formats = append(o.formats, fp[i].(reports.Format))
		o.paths = append(o.paths, &path)
	}
	return o
}

// TestOutputFlags: run and conform offer one flag per format of the
// registry, with the help the format gives for their kind of result.
func TestOutputFlags(t *testing.T) {
	for _, kind := range []string{result.KindRun, result.KindConform} {
		fs := flag.NewFlagSet(kind, flag.ContinueOnError)
		o := outputFlags(fs, kind)
		if err := fs.Parse([]string{"--json", "a.json", "--html", "b.html"}); err != nil {
			t.Fatal(err)
		}
		if o.path("json") != "a.json" || o.path("html") != "b.html" || o.path("junit") != "" {
			t.Errorf("%s: paths json %q html %q junit %q", kind, o.path("json"), o.path("html"), o.path("junit"))
		}
		for _, f := range reports.Formats() {
			fl := fs.Lookup(f.Name)
			if fl == nil || fl.Usage == "" || fl.Usage != f.Help[kind] {
				t.Errorf("%s: --%s missing or without its help", kind, f.Name)
			}
		}
	}
}

// TestCheckOutputsSamePath: two formats into one file (the same path after
// cleaning, "-" included) is a usage error naming both flags.
func TestCheckOutputsSamePath(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(dir, "r.x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		json, html string
		want       string // "" no error
	}{
		{"same path", filepath.Join(dir, "x"), filepath.Join(dir, "x"), "--json and --html both write"},
		{"same after cleaning", filepath.Join(dir, "x"), dir + "/./sub/../x", "--json and --html both write"},
		{"relative and absolute", rel, filepath.Join(dir, "r.x"), "--json and --html both write"},
		{"both stdout", "-", "-", `--json and --html both write "-"`},
		{"different files", filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), ""},
		{"one output", filepath.Join(dir, "r.json"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := testOutputs(reports.Format{Name: "json"}, tt.json, reports.Format{Name: "junit"}, "",
				reports.Format{Name: "html"}, tt.html).check()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("check() = %v, want %q", err, tt.want)
			}
		})
	}
}
