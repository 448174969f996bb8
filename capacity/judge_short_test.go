package capacity

import (
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// TestHarnessBoundClientsShort: a closed-model step whose live clients
// stayed far below what it asked for could not offer its load: the step
// is harness-bound, naming the figures, never a PASS or a FAIL charged to
// the server.
func TestHarnessBoundClientsShort(t *testing.T) {
	r := result.NewRun()
	r.Totals = result.Totals{Requests: 100, Successes: 100}
	r.Sessions = &result.Sessions{Started: 100, ClientsAsked: 1000, ClientsPeak: 120}
	why := Judgement{}.harnessBound(r, r.Headline(), nil)
	if !strings.Contains(why, "only 120 of the 1000 clients the stages asked for were ever live at once") {
		t.Errorf("harness-bound %q: the shortfall is not named", why)
	}
	r.Sessions.ClientsPeak = 1000
	if why := (Judgement{}).harnessBound(r, r.Headline(), nil); why != "" {
		t.Errorf("harness-bound %q with every client up", why)
	}
}
