package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribe renders every example scenario and compares it with
// testdata/describe/<name>.golden (refresh with -update).
func TestDescribe(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example scenarios")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			p, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			p.File = "scenarios/" + name + ".yaml" // stable whatever the working directory
			var b bytes.Buffer
			if err := p.Describe(&b); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "describe", name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("Describe differs from %s:\n--- got\n%s--- want\n%s", golden, b.Bytes(), want)
			}
		})
	}
}
