package reports

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/internal/testkit/termtest"
)

// TestConformProgressGolden: conform's bar, drawn on a terminal, as it is
// left when the suite ends: part-way (an interrupt, a long section cut to
// the line), every case done, none done. Each line within TermWidth; the
// screens are in testdata/conform_progress.txt.
func TestConformProgressGolden(t *testing.T) {
	const long = "udp-lobby.md §15 Game-instance handshake, with a section name far too long"
	var all strings.Builder
	for _, tt := range []struct {
		name  string
		total int
		cases []string // the section of each case done, in turn
	}{
		{"part-way, a long section", 87, []string{"udp-lobby.md §5 Room list", "udp-lobby.md §5 Room list", long}},
		{"every case done", 4, []string{"tcp-lobby.md §3 Connect", "tcp-lobby.md §3 Connect", "tcp-lobby.md §7 Errors", "tcp-lobby.md §7 Errors"}},
		{"none done", 5, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			scr := termtest.New()
			c := NewConformProgress(scr, tt.total)
			for i, s := range tt.cases {
				c.Case(i+1, tt.total, s)
			}
			c.Stop()
			if u := scr.Unknown(); len(u) > 0 {
				t.Errorf("escape sequences the test's terminal does not know: %v", u)
			}
			out := scr.Text()
			assertFits(t, out)
			want := fmt.Sprintf("conform %d/%d", len(tt.cases), tt.total)
			if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
				t.Errorf("the bar does not say %q:\n%s", want, out)
			}
			fmt.Fprintf(&all, "== %s\n%s", tt.name, out)
		})
	}
	golden.Check(t, filepath.Join("testdata", "conform_progress.txt"), []byte(all.String()))
}
