package scenario

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/internal/words"
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
		for _, l := range strings.Split(b.String(), "\n") {
			if w := words.Width(l); w > words.TermWidth {
				t.Errorf("line %q is %d columns wide, over %d", l, w, words.TermWidth)
			}
		}
		return b.Bytes()
	})
}
