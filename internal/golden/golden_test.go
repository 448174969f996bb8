package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that notes failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(string, ...any)        { r.failed = true }
func (r *recorder) Fatalf(string, ...any)        { r.failed = true }
func (r *recorder) Fatal(...any)                 { r.failed = true }
func (r *recorder) Logf(format string, a ...any) {}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, got string
		fail            bool
	}{
		{"equal", path, "same\n", false},
		{"differs", path, "same", true},
		{"missing", filepath.Join(dir, "none.golden"), "x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Check(r, tt.path, []byte(tt.got))
			if r.failed != tt.fail {
				t.Errorf("failed = %v, want %v", r.failed, tt.fail)
			}
		})
	}
}

func TestCheckUpdate(t *testing.T) {
	defer func(old bool) { *update = old }(*update)
	*update = true
	path := filepath.Join(t.TempDir(), "new", "dir", "b.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("fresh"))
	if got, err := os.ReadFile(path); r.failed || err != nil || string(got) != "fresh" {
		t.Fatalf("after -update: %q, %v (failed %v)", got, err, r.failed)
	}
}
