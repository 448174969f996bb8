package scenario

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
)

// ownedBase is a valid scenario whose server lobbybench starts; rows of
// TestOwnedKeys add faults (from line 6 on) or change it.
const ownedBase = `protocol: udp-lobby
target: 127.0.0.1:9000
target_cmd: "lobbybench serve --udp 127.0.0.1:9000"
load: {rate: 10/s, duration: 60s}
flows: [{name: f, steps: [list_rooms]}]
`

func TestOwnedKeys(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		yaml   string
		faults []owned.Fault
		want   []string // "line: message", one per expected error
	}{
		{"target_cmd alone", ownedBase, nil, nil},
		{"kill and stop", ownedBase + `faults:
  - at: 20s
    kill: SIGKILL
    restart_after: 1s
  - at: 40s
    stop: 5s
`, []owned.Fault{{At: 20 * s, Kill: "SIGKILL", RestartAfter: s}, {At: 40 * s, Stop: 5 * s}}, nil},
		{"signal spellings", ownedBase + "faults: [{at: 1s, kill: term}, {at: 2s, kill: 9}]\n",
			[]owned.Fault{{At: s, Kill: "SIGTERM"}, {At: 2 * s, Kill: "SIGKILL"}}, nil},
		{"faults without target_cmd", strings.Replace(ownedBase, "target_cmd: \"lobbybench serve --udp 127.0.0.1:9000\"\n", "", 1) + "faults: [{at: 1s, stop: 1s}]\n",
			nil, []string{`5: faults need target_cmd: lobbybench can kill or stop only a server it started`}},
		{"target_cmd without target", strings.Replace(ownedBase, "target: 127.0.0.1:9000\n", "", 1),
			nil, []string{`2: target_cmd needs target: the address the started server answers at (e.g. target: 127.0.0.1:9000)`}},
		{"target_cmd empty", strings.Replace(ownedBase, `"lobbybench serve --udp 127.0.0.1:9000"`, `" "`, 1),
			nil, []string{`3: target_cmd is empty`}},
		{"target_cmd a list", strings.Replace(ownedBase, `"lobbybench serve --udp 127.0.0.1:9000"`, `[lobbybench, serve]`, 1),
			nil, []string{`3: target_cmd must be a single value, got a list`}},
		{"target_cmd with embedded_server", ownedBase + "embedded_server: {max_players: 8}\n",
			nil, []string{`6: embedded_server applies only when no target is given (target is 127.0.0.1:9000)`}},
		{"kill at the top", ownedBase + "kill: SIGKILL\n", nil, []string{`6: unknown key "kill" in the scenario: it belongs in a fault (faults: [{at: 20s, kill: SIGKILL}])`}},
		{"target-cmd spelled with a dash", strings.Replace(ownedBase, "target_cmd:", "target-cmd:", 1), nil, []string{`3: unknown key "target-cmd" in the scenario (did you mean "target_cmd"?)`}},
		{"faults not a list", ownedBase + "faults: {at: 1s}\n", nil, []string{`6: faults must be a list of {at, kill} or {at, stop}, got a mapping`}},
		{"faults empty", ownedBase + "faults: []\n", nil, []string{`6: faults is empty`}},
		{"missing at", ownedBase + "faults:\n  - kill: SIGKILL\n", nil, []string{`7: faults[0]: missing "at" (when, into the run, e.g. at: 20s)`}},
		{"unknown key", ownedBase + "faults:\n  - {at: 1s, kil: SIGKILL}\n", nil, []string{`7: unknown key "kil" in faults[0] (did you mean "kill"?)`}},
		{"bad signal", ownedBase + "faults:\n  - at: 1s\n    kill: SIGHUP\n", nil, []string{`8: faults[0].kill: unknown signal "SIGHUP" (want SIGKILL or SIGTERM; for a hang use stop: 5s)`}},
		{"at without unit", ownedBase + "faults:\n  - at: 20\n    stop: 1s\n", nil, []string{`7: faults[0].at: duration "20" has no unit`}},
		{"neither kill nor stop", ownedBase + "faults:\n  - at: 1s\n", nil, []string{`7: faults[0]: give kill: SIGKILL|SIGTERM (crash and restart) or stop: DURATION (hang)`}},
		{"both kill and stop", ownedBase + "faults:\n  - {at: 1s, kill: SIGKILL, stop: 1s}\n", nil, []string{`7: faults[0]: give either kill: or stop:, not both`}},
		{"restart_after on a stop", ownedBase + "faults:\n  - at: 1s\n    stop: 1s\n    restart_after: 1s\n", nil, []string{`9: faults[0].restart_after: applies to kill: only`}},
		{"zero stop", ownedBase + "faults:\n  - at: 1s\n    stop: 0s\n", nil, []string{`7: faults[0]: give kill: SIGKILL|SIGTERM`}},
		{"after the run", ownedBase + "faults:\n  - at: 90s\n    stop: 1s\n", nil, []string{`7: faults[0].at: 1m30s is not before the end of the run (1m0s): the fault would never happen`}},
		{"overlap", ownedBase + "faults:\n  - at: 20s\n    stop: 5s\n  - at: 22s\n    kill: SIGKILL\n", nil, []string{`9: faults[1].at: 22s is while the server is still stopped by the previous fault (until 25s)`}},
		{"out of order", ownedBase + "faults:\n  - {at: 20s, kill: SIGKILL}\n  - {at: 10s, kill: SIGKILL}\n", nil, []string{`8: faults[1].at: 10s is not after the previous fault's 20s: list faults in time order`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.yaml", []byte(tt.yaml))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected errors:\n%v", err)
				}
				if p.TargetCmd != "lobbybench serve --udp 127.0.0.1:9000" || !slices.Equal(p.Faults, tt.faults) {
					t.Errorf("TargetCmd %q Faults %+v, want %+v", p.TargetCmd, p.Faults, tt.faults)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if es := err.(Errors); len(es) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%v", len(es), len(tt.want), err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), "s.yaml:"+w) {
					t.Errorf("missing %q in:\n%v", "s.yaml:"+w, err)
				}
			}
		})
	}
}

func TestDescribeOwned(t *testing.T) {
	p, err := Parse("s.yaml", []byte(ownedBase+"faults: [{at: 20s, kill: SIGKILL, restart_after: 1s}, {at: 40s, stop: 5s}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.Describe(&b); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(` +`).ReplaceAllString(b.String(), " ") // whatever the column widths
	for _, w := range []string{
		"\n started by lobbybench serve --udp 127.0.0.1:9000\n",
		"\n fault SIGKILL at +20s, then restart after 1s\n fault SIGSTOP at +40s for 5s, then SIGCONT\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("Describe lacks %q:\n%s", w, b.String())
		}
	}
}
