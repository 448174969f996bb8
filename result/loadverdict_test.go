package result

import (
	"strings"
	"testing"
)

// TestNoLoad: a run that sent no request is NO LOAD (status incomplete:
// exit 6), first, whatever its thresholds say, and a closed-model run
// whose stages never asked for a client says so.
func TestNoLoad(t *testing.T) {
	closed := func() *Run {
		r := NewRun()
		r.Sessions = &Sessions{}
		r.ShardRuns = []ShardRun{{Shard: "0/1", Model: "closed"}}
		return r
	}
	withThreshold := closed()
	withThreshold.Thresholds = []ThresholdResult{{Name: "connect.p99 < 50ms", NoData: true}}
	open := NewRun()
	open.ShardRuns = []ShardRun{{Shard: "0/1", Model: "open"}}
	sent := NewRun()
	sent.Totals = Totals{Requests: 1, Successes: 1}
	tests := []struct {
		name string
		run  *Run
		want string // "" not NO LOAD
	}{
		{"closed, never asked", closed(), "NO LOAD · no request was sent (0 sessions started): the stages never asked for a client before the end"},
		{"with a threshold", withThreshold, "NO LOAD · no request was sent (0 sessions started): the stages never asked for a client before the end (a ramp from 0 reaches its first client only when its target reaches 1): nothing was measured; 1 of 1 threshold breached"},
		{"open", open, "NO LOAD · no request was sent (0 sessions started): nothing was measured"},
		{"one request", sent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hl := tt.run.Headline()
			if tt.want == "" {
				if strings.HasPrefix(hl.Text, "NO LOAD") || tt.run.NoLoad() != "" {
					t.Errorf("headline %q, NoLoad %q: a run that sent a request", hl.Text, tt.run.NoLoad())
				}
				return
			}
			if hl.Status != StatusIncomplete || !strings.HasPrefix(hl.Text, tt.want) || !hl.Partial() {
				t.Errorf("headline %+v, want status incomplete and %q", hl, tt.want)
			}
		})
	}
}

// TestClientsShort: a closed-model run whose live clients stayed below
// ClientsLiveFraction of what its stages asked for is INCOMPLETE with the
// figures; one within it, an open-model run, and a document without the
// figures are not; a merge judges each shard by its own share.
func TestClientsShort(t *testing.T) {
	run := func(shards ...Sessions) *Run {
		r := NewRun()
		r.Totals = Totals{Requests: 100, Successes: 100}
		var sum Sessions
		for i, s := range shards {
			sum.Add(s)
			r.ShardRuns = append(r.ShardRuns, ShardRun{Shard: string(rune('0'+i)) + "/" + string(rune('0'+len(shards))), Model: "closed", Sessions: s})
		}
		r.Sessions = &sum
		return r
	}
	tests := []struct {
		name string
		run  *Run
		want string // "" not INCOMPLETE
	}{
		{"far below", run(Sessions{ClientsAsked: 1000000, ClientsPeak: 5118}),
			"INCOMPLETE · the load was not all generated (only 5118 of the 1000000 clients the stages asked for were ever live at once)"},
		{"just below 90%", run(Sessions{ClientsAsked: 100, ClientsPeak: 89}),
			"INCOMPLETE · the load was not all generated (only 89 of the 100 clients the stages asked for were ever live at once)"},
		{"at 90%", run(Sessions{ClientsAsked: 100, ClientsPeak: 90}), ""},
		{"all up", run(Sessions{ClientsAsked: 100, ClientsPeak: 100}), ""},
		{"open model (nothing asked)", run(Sessions{MaxActive: 3}), ""},
		{"one shard short", run(Sessions{ClientsAsked: 500, ClientsPeak: 500}, Sessions{ClientsAsked: 500, ClientsPeak: 400}),
			"INCOMPLETE · the load was not all generated (shard 1/2: only 400 of the 500 clients the stages asked for were ever live at once)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hl := tt.run.Headline()
			if tt.want == "" {
				if hl.Status == StatusIncomplete {
					t.Errorf("headline %q: not short", hl.Text)
				}
				return
			}
			if hl.Status != StatusIncomplete || !strings.HasPrefix(hl.Text, tt.want) {
				t.Errorf("headline %q\nwant %q", hl.Text, tt.want)
			}
		})
	}
	// Merged, the shards' sums (900 of 1000) would hide the short one.
	m, err := Merge(run(Sessions{ClientsAsked: 500, ClientsPeak: 500}), run(Sessions{ClientsAsked: 500, ClientsPeak: 400}))
	if err != nil {
		t.Fatal(err)
	}
	if m.Sessions.ClientsAsked != 1000 || m.Sessions.ClientsPeak != 900 || len(m.ClientsShort()) != 1 {
		t.Errorf("merged sessions %+v, short %q: want the sums and the short shard", m.Sessions, m.ClientsShort())
	}
}
