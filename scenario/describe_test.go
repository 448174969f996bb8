package scenario

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// TestDescribe renders every example scenario and compares it with
// testdata/describe/<name>.golden (refresh with -update).
func TestDescribe(t *testing.T) {
	golden.Each(t, "../scenarios/*.yaml", filepath.Join("testdata", "describe"), func(t *testing.T, f string) []byte {
		p, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		p.File = "scenarios/" + filepath.Base(f) // stable whatever the working directory
		var b bytes.Buffer
		if err := p.Describe(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	})
}
