package reports

import (
	"bytes"
	"strings"
	"testing"
)

// TestConformTextWire: the terminal's wire log of a failure cuts long
// entries and long logs (and says how much it left out), and names an
// entry whose hex does not decode (a hand-edited document) instead of
// showing its bytes wrong.
func TestConformTextWire(t *testing.T) {
	c := suiteConform()
	fail := &c.Cases[1]
	fail.Wire = append(fail.Wire, WireEntry{Dir: DirRecv, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: "abz"})
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
