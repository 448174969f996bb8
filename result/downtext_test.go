package result

import (
	"strings"
	"testing"
	"time"
)

// TestDownTextLostState: a run whose target came back from a restart and
// whose requests then timed out for the state the new process lost says
// so beside "no request failed while down", which never stands alone
// then; without such failures the headline is as it was.
func TestDownTextLostState(t *testing.T) {
	restart := func(at int, after map[string]int64) Outage {
		s := time.Duration(at) * time.Second
		return Outage{StartNS: s, LastUpNS: s - 250*time.Millisecond, EndNS: s + 2*time.Second, Back: true,
			Kind: DownRefused, AnsweredBefore: 5000, FailuresAfter: after}
	}
	for _, tc := range []struct {
		name    string
		outs    []Outage
		want    string
		notWant string
	}{
		{"no failures at all", []Outage{restart(20, nil)},
			"(back at +22.0 s; 5000 requests answered before; no request failed while down)", "restart"},
		{"timeouts after the restart", []Outage{restart(20, map[string]int64{"timeout": 660})},
			"no request failed while down; 660 timeout after the restart, of requests sent to the restarted server: it had lost their state)", ""},
		{"after two restarts", []Outage{restart(20, map[string]int64{"timeout": 400}), restart(40, map[string]int64{"timeout": 260, "join_failed": 3})},
			"660 timeout, 3 join_failed after the restarts, of requests sent to the restarted server: it had lost their state", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Outages: tc.outs}
			hl := r.Headline()
			if hl.Status != StatusTargetDown || !strings.Contains(hl.Text, tc.want) {
				t.Errorf("headline %q (%s), want it to say %q", hl.Text, hl.Status, tc.want)
			}
			if tc.notWant != "" && strings.Contains(hl.Text, tc.notWant) {
				t.Errorf("headline %q says %q", hl.Text, tc.notWant)
			}
		})
	}
}
