package scenario

import (
	"path/filepath"
	"testing"
	"time"
)

// TestExamples loads every example scenario shipped in scenarios/ and checks
// the properties the docs and the examples' comments promise of each.
func TestExamples(t *testing.T) {
	tests := []struct {
		file     string
		proto    ProtocolName
		model    LoadModel
		maxDur   time.Duration
		minFlows int
	}{
		{"join-storm.yaml", UDPLobby, Open, time.Minute, 1},
		{"create-storm.yaml", UDPLobby, Open, time.Minute, 1},
		{"list-poll.yaml", UDPLobby, Closed, time.Minute, 1},
		{"full-match-udp.yaml", UDPLobby, Open, time.Minute, 1},
		{"full-match-tcp.yaml", TCPLobby, Open, time.Minute, 1},
		{"rate-limit-probe.yaml", UDPLobby, Closed, time.Minute, 1},
		{"malformed-mix.yaml", UDPLobby, Open, time.Minute, 2},
		{"soak.yaml", UDPLobby, Closed, time.Hour, 2},
		{"leviathan-join.yaml", Leviathan, Open, time.Minute, 1},
		{"matchmaker-day.yaml", UDPLobby, Open, time.Minute, 1},
		{"scripted-tcp.yaml", TCPLobby, Open, time.Minute, 1},
		{"scripted-udp.yaml", UDPLobby, Open, time.Minute, 1},
	}
	matches, _ := filepath.Glob("../scenarios/*.yaml")
	if len(matches) != len(tests) {
		t.Errorf("scenarios/ holds %d files, the test knows %d: add the new one here", len(matches), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			p, err := Load(filepath.Join("..", "scenarios", tt.file))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if p.Protocol != tt.proto || p.Load.Model != tt.model {
				t.Errorf("protocol %s model %s, want %s %s", p.Protocol, p.Load.Model, tt.proto, tt.model)
			}
			if p.Load.Duration > tt.maxDur {
				t.Errorf("duration %s over %s", p.Load.Duration, tt.maxDur)
			}
			if len(p.Flows) < tt.minFlows || len(p.Thresholds) == 0 {
				t.Errorf("%d flows, %d thresholds", len(p.Flows), len(p.Thresholds))
			}
			if p.Target != "" {
				t.Errorf("examples must default to the embedded server, target %q", p.Target)
			}
			if p.Load.Model == Open && p.Load.Ramp().Total() > 5000 {
				t.Errorf("open model would start %.0f sessions; keep examples small", p.Load.Ramp().Total())
			}
		})
	}
}
