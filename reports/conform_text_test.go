package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestConformTextWire: the terminal's wire log of a failure cuts long
// entries and long logs (and says how much it left out), and names an
// entry whose hex does not decode (a hand-edited document) instead of
// showing its bytes wrong.
func TestConformTextWire(t *testing.T) {
	c := suiteConform()
	fail := &c.Cases[1]
	fail.Wire = append(fail.Wire, result.WireEntry{Dir: result.DirRecv, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: "abz"})
	var b bytes.Buffer
	if err := WriteConformText(&b, c, ConformTextOptions{MaxWireBytes: 20, MaxWireEntries: 2}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"(40 bytes)\n          0000  ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab\n          0010  ab ab ab ab\n          … 20 more bytes\n",
		"… 4 more entries (--json keeps up to 256 per case)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteConformText(&b, c, ConformTextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "← +0.000ms 127.0.0.1:8080 → 127.0.0.2:40000 (not hex: encoding/hex: invalid byte: U+007A 'z')\n"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
}

// TestConformTextQuietSkips: --quiet names the skipped cases when a skip
// budget (--max-skips) counts them, so a run that fails on its skips
// says which; without a budget it leaves them out, as it always did.
func TestConformTextQuietSkips(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxSkips *int
		want     bool
	}{
		{"no budget", nil, false},
		{"max-skips 0", new(int), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := suiteConform()
			c.MaxSkips = tc.maxSkips
			var skipped []string
			for _, k := range c.Cases {
				if k.Verdict == result.VerdictSkip {
					skipped = append(skipped, k.ID)
				}
			}
			if len(skipped) == 0 {
				t.Fatal("the fixture has no skipped case")
			}
			var b bytes.Buffer
			if err := WriteConformText(&b, c, ConformTextOptions{Quiet: true}); err != nil {
				t.Fatal(err)
			}
			for _, id := range skipped {
				if got := strings.Contains(b.String(), id+" "); got != tc.want {
					t.Errorf("quiet text names skipped %s: %v, want %v:\n%s", id, got, tc.want, b.String())
				}
			}
		})
	}
}
