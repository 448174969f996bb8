package result

import (
	"strings"
	"testing"
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
			got := r.SilentCutWarning()
			if tc.want == nil {
				if got != "" {
					t.Errorf("warning %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q does not say %q", got, w)
				}
			}
			if ws := r.Warnings(); len(ws) != 1 || ws[0] != got {
				t.Errorf("Warnings() = %q, want the one line", ws)
			}
		})
	}
}
