package scenario

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	open := `protocol: udp-lobby
load: {start_rate: 10/s, stages: [{rate: 100/s, for: 10s}], max_clients: 50}
flows: [{steps: [list_rooms]}]
`
	closed := `protocol: udp-lobby
load: {start_clients: 2, stages: [{clients: 10, for: 10s}]}
flows: [{steps: [list_rooms]}]
`
	seven := int64(7)
	// The protocols' own flags (udp-lobby's --instance-ports) as run
	// declares them.
	protoFlags := func(args ...string) *ProtocolFlags {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		pf := AddProtocolFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return pf
	}
	ports := func(p *Plan) string { return p.Options.Describe() }
	tests := []struct {
		name    string
		yaml    string
		o       Overrides
		check   func(*Plan) bool
		wantErr string
	}{
		{"nothing", open, Overrides{}, func(p *Plan) bool { return p.Load.Stages[0].Target == 100 }, ""},
		{"target", open, Overrides{Target: "127.0.0.1:9"}, func(p *Plan) bool { return p.Target == "127.0.0.1:9" }, ""},
		{"bad target", open, Overrides{Target: "nope"}, nil, "--target"},
		{"duration", open, Overrides{Duration: 3 * time.Second}, func(p *Plan) bool { return p.Load.Duration == 3*time.Second }, ""},
		{"duration before a fault", open + "target: 127.0.0.1:9000\ntarget_cmd: srv\nfaults: [{at: 5s, stop: 1s}]\n", Overrides{Duration: 3 * time.Second}, nil,
			"--duration 3s ends the run before the scenario's fault SIGSTOP at +5s for 1s, then SIGCONT"},
		{"duration after the faults", open + "target: 127.0.0.1:9000\ntarget_cmd: srv\nfaults: [{at: 5s, stop: 1s}]\n", Overrides{Duration: 6 * time.Second}, func(p *Plan) bool { return len(p.Faults) == 1 }, ""},
		{"rate scale", open, Overrides{Rate: RateOverride{Scale: 2}}, func(p *Plan) bool { return p.Load.Start == 20 && p.Load.Stages[0].Target == 200 }, ""},
		{"rate absolute keeps shape", open, Overrides{Rate: RateOverride{Absolute: 50}}, func(p *Plan) bool { return p.Load.Start == 5 && p.Load.Stages[0].Target == 50 }, ""},
		{"rate on closed", closed, Overrides{Rate: RateOverride{Scale: 2}}, nil, "use --clients"},
		{"clients on closed", closed, Overrides{Clients: 20}, func(p *Plan) bool {
			return p.Load.Start == 4 && p.Load.Stages[0].Target == 20 && p.Load.MaxClients == 20
		}, ""},
		{"clients on open caps", open, Overrides{Clients: 7}, func(p *Plan) bool { return p.Load.MaxClients == 7 && p.Load.Stages[0].Target == 100 }, ""},
		{"seed", open, Overrides{Seed: &seven}, func(p *Plan) bool { return p.Seed == 7 }, ""},
		{"instance ports", open, Overrides{Protocol: protoFlags("--instance-ports", "9000-9063")}, func(p *Plan) bool { return ports(p) == ", header spec, instance ports 9000-9063" }, ""},
		{"instance ports replace the key", open + "instance_ports: 8081-8180\n", Overrides{Protocol: protoFlags("--instance-ports", "7000")}, func(p *Plan) bool { return ports(p) == ", header spec, instance ports 7000-7000" }, ""},
		{"no protocol flag given", open + "instance_ports: 8081-8180\n", Overrides{Protocol: protoFlags()}, func(p *Plan) bool { return ports(p) == ", header spec, instance ports 8081-8180" }, ""},
		{"instance ports backwards", open, Overrides{Protocol: protoFlags("--instance-ports", "9063-9000")}, nil, "--instance-ports: "},
		{"instance ports not a port", open, Overrides{Protocol: protoFlags("--instance-ports", "ports")}, nil, "--instance-ports: "},
		{"flows replace the key", open + "flows_mode: auto\n", Overrides{Flows: FlowsVirtual}, func(p *Plan) bool { return p.FlowsMode == FlowsVirtual }, ""},
		{"no flows flag keeps the key", open + "flows_mode: auto\n", Overrides{}, func(p *Plan) bool { return p.FlowsMode == FlowsAuto }, ""},
		{"flows virtual on tcp-lobby", strings.Replace(open, "udp-lobby", "tcp-lobby", 1), Overrides{Flows: FlowsVirtual}, nil, "--flows virtual: virtual flows are UDP only, and tcp-lobby runs over TCP"},
		{"instance ports on tcp-lobby", strings.Replace(open, "udp-lobby", "tcp-lobby", 1), Overrides{Protocol: protoFlags("--instance-ports", "9000-9063")}, nil, "--instance-ports applies to udp-lobby only, not tcp-lobby"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			before := p.Load.Stages[0].Target
			err = p.Apply(tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if p.Load.Stages[0].Target != before {
					t.Error("a failed Apply changed the plan")
				}
				return
			}
			if err != nil || !tt.check(p) {
				t.Errorf("Apply: %v, plan load %+v target %q seed %d", err, p.Load, p.Target, p.Seed)
			}
		})
	}
}

func TestParseRateOverride(t *testing.T) {
	for in, want := range map[string]RateOverride{"2x": {Scale: 2}, "0.5x": {Scale: 0.5}, "800/s": {Absolute: 800}, "60/m": {Absolute: 1}} {
		if got, err := ParseRateOverride(in); err != nil || got != want {
			t.Errorf("ParseRateOverride(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"0x", "-1x", "x", "800", "0/s", "fast"} {
		if _, err := ParseRateOverride(bad); err == nil {
			t.Errorf("ParseRateOverride(%q) accepted", bad)
		}
	}
	var r RateOverride
	if err := r.Set("3x"); err != nil || r.String() != "3x" {
		t.Errorf("Set/String = %v %q", err, r.String())
	}
}
