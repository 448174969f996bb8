package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteOutputs: every requested file is written whole (through a
// temporary file renamed into place, none left behind), one that fails
// is named by its flag and leaves nothing, and the others are written
// anyway.
func TestWriteOutputs(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	outs := []output{
		{"json", filepath.Join(dir, "r.json"), text("{}\n")},
		{"junit", "", func(io.Writer) error { t.Error("an output not asked for was rendered"); return nil }},
		{"markdown", filepath.Join(dir, "r.md"), func(w io.Writer) error {
			io.WriteString(w, "half")
			return errors.New("renderer broke")
		}},
		{"html", filepath.Join(dir, "r.html"), text("<html>")},
	}
	if err := checkOutputs(outs); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &errb}
	if writeOutputs(e, "run", outs) {
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
		err := checkOutputs([]output{{"markdown", tt.path, nil}})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the check left %d entries, want only f", len(ents))
	}
}
