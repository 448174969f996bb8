// Package golden compares a test's output with a golden file, the one
// copy of that mechanism for every package's tests.
//
// Run go test with -update to rewrite the golden files from the current
// output (creating missing directories); check the diff before committing.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Check fails t unless got equals the contents of the file at path; with
// -update it writes got to path instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (check, then go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Each runs one subtest per file matching pattern (a filepath.Glob),
// named after the file without its extension, and checks what render
// makes of it against dir/<name>.golden; no file matching fails t.
func Each(t *testing.T, pattern, dir string, render func(t *testing.T, path string) []byte) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		t.Run(name, func(t *testing.T) {
			Check(t, filepath.Join(dir, name+".golden"), render(t, f))
		})
	}
}
