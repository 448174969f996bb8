package reports

import (
	"io"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

func TestCheckDocsBase(t *testing.T) {
	for base, ok := range map[string]bool{
		"":                                      true,
		"https://git.example/lb/docs/protocols": true,
		"http://localhost:8000/protocols/":      true,
		"file:///src/lobbybench/docs/protocols": true,
		"/src/lobbybench/docs/protocols":        true,
		"javascript:alert(1)":                   false,
		"data:text/html,x":                      false,
		"https://x.example/p?ref=main":          false,
		"https://x.example/p#top":               false,
		"http://[::1":                           false,
	} {
		if err := CheckDocsBase(base); (err == nil) != ok {
			t.Errorf("CheckDocsBase(%q) = %v, want ok %v", base, err, ok)
		}
	}
	if err := WriteHTML(io.Discard, HTMLOptions{DocsBase: "javascript:x"}, result.NewConform()); err == nil {
		t.Error("WriteHTML accepted a javascript: docs base")
	}
}
