package reports

import (
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestHTMLDocsBase checks that a cited section is linked only when a docs
// base is given, and always carries its path in the repository; a section
// that is not a citation (an older build's) stays plain text.
func TestHTMLDocsBase(t *testing.T) {
	c := result.NewConform()
	c.Protocol = "udp-lobby"
	c.Cases = []result.Case{
		{ID: "udp-lobby/5/1", Section: "udp-lobby.md §5 LOBBY_ROOM_LIST", Description: "cited", Level: result.LevelMust, Verdict: result.VerdictPass},
		{ID: "udp-lobby/9/1", Section: "old text section", Description: "old", Level: result.LevelMust, Verdict: result.VerdictPass},
	}
	for _, tt := range []struct {
		base    string
		want    []string
		wantNot []string
	}{
		{"", []string{`title="docs/protocols/udp-lobby.md §5 in the lobbybench repository"`, "Sections cite the protocol documents in docs/protocols/ of the lobbybench repository."},
			[]string{"<a href=\"https://", "#s5\""}},
		{"https://docs.example/p", []string{`<a href="https://docs.example/p/udp-lobby.md#s5">udp-lobby.md §5 LOBBY_ROOM_LIST</a>`, "linked at https://docs.example/p."},
			[]string{`<a href="https://docs.example/p/old`}},
		{"file:///src/lb/docs/protocols", []string{`<a href="file:///src/lb/docs/protocols/udp-lobby.md#s5">`}, []string{"ZgotmplZ"}},
	} {
		for _, docs := range [][]result.Doc{{c}, {c, c}} {
			page := string(htmlOf(t, HTMLOptions{DocsBase: tt.base}, docs...))
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Errorf("base %q, %d docs: page lacks %q", tt.base, len(docs), w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(page, w) {
					t.Errorf("base %q, %d docs: page has %q", tt.base, len(docs), w)
				}
			}
			if !strings.Contains(page, ">old text section") || strings.Contains(page, "old text section</a>") {
				t.Errorf("base %q: the uncited section is not plain text", tt.base)
			}
		}
	}
}
