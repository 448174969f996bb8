package owned

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFaults(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		faults []Fault
		run    time.Duration
		want   []string // one per expected error
	}{
		{"kill and stop", []Fault{{At: 20 * s, Kill: "SIGKILL", RestartAfter: s}, {At: 40 * s, Stop: 5 * s}}, time.Minute, nil},
		{"term without delay", []Fault{{At: 0, Kill: "term"}}, 0, nil},
		{"neither", []Fault{{At: s}}, 0, []string{"faults[0]: give kill: SIGKILL|SIGTERM (crash and restart) or stop: DURATION (hang)"}},
		{"both", []Fault{{At: s, Kill: "SIGKILL", Stop: s}}, 0, []string{"faults[0]: give either kill: or stop:, not both"}},
		{"bad signal", []Fault{{At: s, Kill: "SIGHUP"}}, 0, []string{`faults[0].kill: unknown signal "SIGHUP" (want SIGKILL or SIGTERM; for a hang use stop: 5s)`}},
		{"negative at", []Fault{{At: -s, Kill: "SIGKILL"}}, 0, []string{"faults[0].at: must not be negative, got -1s"}},
		{"after the end", []Fault{{At: 40 * s, Kill: "SIGKILL"}}, 30 * s, []string{"faults[0].at: 40s is not before the end of the run (30s): the fault would never happen"}},
		{"restart_after on a stop", []Fault{{At: s, Stop: s, RestartAfter: s}}, 0, []string{"faults[0].restart_after: applies to kill: only"}},
		{"restart_after too long", []Fault{{At: s, Kill: "SIGKILL", RestartAfter: time.Hour}}, 0, []string{"faults[0].restart_after: must be between 0 and 10m0s, got 1h0m0s"}},
		{"stop too long", []Fault{{At: s, Stop: time.Hour}}, 0, []string{"faults[0].stop: must be between 0 and 10m0s, got 1h0m0s"}},
		{"out of order", []Fault{{At: 20 * s, Kill: "SIGKILL"}, {At: 10 * s, Kill: "SIGKILL"}}, 0, []string{"faults[1].at: 10s is not after the previous fault's 20s: list faults in time order"}},
		{"during a stop", []Fault{{At: 20 * s, Stop: 5 * s}, {At: 22 * s, Kill: "SIGKILL"}}, 0, []string{"faults[1].at: 22s is while the server is still stopped by the previous fault (until 25s)"}},
		{"before the restart", []Fault{{At: 20 * s, Kill: "SIGKILL", RestartAfter: 5 * s}, {At: 24 * s, Stop: s}}, 0, []string{"faults[1].at: 24s is before the previous fault restarts the server (25s at the earliest)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := CheckFaults(tt.faults, tt.run)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors %v, want %q", len(errs), errs, tt.want)
			}
			for i, e := range errs {
				if e.Error() != tt.want[i] {
					t.Errorf("error %d = %q, want %q", i, e.Error(), tt.want[i])
				}
			}
		})
	}
}

func TestParseKillSignal(t *testing.T) {
	for in, want := range map[string]string{"SIGKILL": "SIGKILL", "kill": "SIGKILL", "9": "SIGKILL", "SIGTERM": "SIGTERM", "Term": "SIGTERM", "15": "SIGTERM", "SIGSTOP": "", "": ""} {
		got, err := ParseKillSignal(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseKillSignal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestFaultString(t *testing.T) {
	tests := []struct {
		f    Fault
		want string
	}{
		{Fault{At: 20 * time.Second, Kill: "SIGKILL", RestartAfter: time.Second}, "SIGKILL at +20s, then restart after 1s"},
		{Fault{At: 20 * time.Second, Kill: "SIGTERM"}, "SIGTERM at +20s, then restart"},
		{Fault{At: 40 * time.Second, Stop: 5 * time.Second}, "SIGSTOP at +40s for 5s, then SIGCONT"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want || !strings.Contains(got, "at +") {
			t.Errorf("%+v.String() = %q, want %q", tt.f, got, tt.want)
		}
	}
}
