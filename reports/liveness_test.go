package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestMalformedNotChecked: malformed packets no liveness probe followed
// (a script's sends) read "not checked" in every format that shows the
// findings, never a "0/0" (or a "0 / 0" in a green row) that reads as
// the server kept answering.
func TestMalformedNotChecked(t *testing.T) {
	r := sampleRun(t)
	r.Malformed = []result.MalformedFinding{{Kind: "bad_crc", Sent: 5}}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return WriteRunTable(b, r) },
		"markdown": func(b *bytes.Buffer) error { return WriteRunMarkdown(b, r) },
		"html":     func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, r) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := b.String()
		if !strings.Contains(out, "not checked") || strings.Contains(out, "0/0") || strings.Contains(out, "0 / 0") {
			t.Errorf("%s: want the liveness \"not checked\", no 0/0:\n%s", name, out)
		}
	}
}
