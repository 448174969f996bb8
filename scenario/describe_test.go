package scenario

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
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
			golden.Check(t, filepath.Join("testdata", "describe", name+".golden"), b.Bytes())
		})
	}
}
