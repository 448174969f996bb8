package result

import (
	"strings"
	"testing"
	"time"
)

func TestSilentCutWarning(t *testing.T) {
	list := Series{Name: "LOBBY_LIST_ROOMS", Requests: 10, Cut: 4, CutSilent: 3}
	join := Series{Name: "LOBBY_JOIN_ROOM", Requests: 5, Cut: 2, CutSilent: 2}
	for _, tc := range []struct {
		name        string
		msgs        []Series
		interrupted bool
		want        []string // "" for no line
	}{
		{"none cut", []Series{{Name: "LOBBY_LIST_ROOMS", Requests: 10, Successes: 10}}, false, nil},
		{"cut, none silent", []Series{{Name: "LOBBY_LIST_ROOMS", Requests: 10, Cut: 4}}, false, nil},
		{"silent", []Series{list}, false, []string{"3 requests had had no reply for 1.0 s or more", "(LOBBY_LIST_ROOMS 3)", "not errors", "cut_silent.rate"}},
		{"two messages", []Series{list, join}, false, []string{"5 requests", "(LOBBY_LIST_ROOMS 3, LOBBY_JOIN_ROOM 2)"}},
		{"interrupted", []Series{list}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Messages: tc.msgs, ShardRuns: []ShardRun{{Interrupted: tc.interrupted}}}
			checkOneWarning(t, r, r.SilentCutWarning(), tc.want)
		})
	}
}

// TestSilentAtEndWarning: a run that ended in a silence its watchdog
// could not yet call down says so first among its warnings, with when it
// began, interrupted or not; one without does not. A merge keeps the
// shortest silence its shards saw, and none once a shard found the
// target down.
func TestSilentAtEndWarning(t *testing.T) {
	s := &SilentEnd{SinceNS: 6 * time.Second, LastUpNS: 5750 * time.Millisecond, EndNS: 10 * time.Second}
	for _, tc := range []struct {
		name        string
		silent      *SilentEnd
		interrupted bool
		want        []string // nil for no line
	}{
		{"none", nil, false, nil},
		{"silent", s, false, []string{"answered none of the watchdog's probes for the last 4.0 s", "from +6.0 s to its end at +10.0 s", "sent at +5.8 s", "may have hung"}},
		{"none answered", &SilentEnd{SinceNS: 0, LastUpNS: -1, EndNS: 3 * time.Second}, false, []string{"for the last 3.0 s", "none was answered"}},
		{"interrupted", s, true, []string{"answered none of the watchdog's probes for the last 4.0 s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{SilentAtEnd: tc.silent, ShardRuns: []ShardRun{{Interrupted: tc.interrupted}}}
			checkOneWarning(t, r, r.SilentAtEndWarning(), tc.want)
		})
	}
	later := &SilentEnd{SinceNS: 8 * time.Second, LastUpNS: 7 * time.Second, EndNS: 10 * time.Second}
	shard := func(silent *SilentEnd, outages ...Outage) *Run {
		r := NewRun()
		r.SilentAtEnd, r.Outages = silent, outages
		return r
	}
	merged, err := Merge(shard(s), shard(nil), shard(later))
	if err != nil {
		t.Fatal(err)
	}
	if got := merged.SilentAtEnd; got == nil || *got != *later {
		t.Errorf("merged silence %+v, want the shortest, %+v", got, later)
	}
	down, err := Merge(shard(s), shard(nil, Outage{StartNS: time.Second, Kind: DownSilent}))
	if err != nil {
		t.Fatal(err)
	}
	if down.SilentAtEnd != nil {
		t.Errorf("merged silence %+v beside an open outage, want none", down.SilentAtEnd)
	}
}

// checkOneWarning checks warning line got of r: none when want is nil,
// else one that says each of want and is r's only warning.
func checkOneWarning(t *testing.T, r *Run, got string, want []string) {
	t.Helper()
	if want == nil {
		if got != "" {
			t.Errorf("warning %q, want none", got)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("warning %q does not say %q", got, w)
		}
	}
	if ws := r.Warnings(); len(ws) != 1 || ws[0] != got {
		t.Errorf("Warnings() = %q, want the one line", ws)
	}
}
