package scenario_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
)

func rateOf(perSec float64) scenario.RateOverride { return scenario.RateOverride{Absolute: perSec} }

// TestFromFlags checks the plan run's flags build without a scenario file:
// the load model each flag picks, steps with their one value, and the
// errors, each naming its flag.
func TestFromFlags(t *testing.T) {
	sec30 := 30 * time.Second
	tests := []struct {
		name, proto, flow string
		o                 scenario.Overrides
		check             func(t *testing.T, p *scenario.Plan)
		err               []string // substrings of the error, in order; nil: no error
	}{
		{name: "open model", proto: "udp-lobby", flow: "list_rooms", o: scenario.Overrides{Rate: rateOf(500), Duration: sec30},
			check: func(t *testing.T, p *scenario.Plan) {
				if p.Name != scenario.CommandLine || p.Protocol != "udp-lobby" || p.Load.Model != scenario.Open || p.Load.Start != 500 || p.Load.Duration != sec30 {
					t.Errorf("plan %q %s %s %v for %v", p.Name, p.Protocol, p.Load.Model, p.Load.Start, p.Load.Duration)
				}
				if p.Load.MaxClients != scenario.DefaultMaxClients || p.Load.Arrivals != scenario.ArrivalsUniform {
					t.Errorf("open-model defaults: max clients %d, arrivals %s", p.Load.MaxClients, p.Load.Arrivals)
				}
			}},
		{name: "closed model", proto: "tcp-lobby", flow: "connect, list_rooms", o: scenario.Overrides{Clients: 10, Duration: time.Second},
			check: func(t *testing.T, p *scenario.Plan) {
				if p.Load.Model != scenario.Closed || p.Load.Start != 10 || p.Load.MaxClients != 10 {
					t.Errorf("load %+v", p.Load)
				}
				if got := kinds(p); got != "connect,list_rooms" {
					t.Errorf("steps %s", got)
				}
			}},
		{name: "values and an alias", proto: "udp-lobby", flow: "create_room,join=created,ping=3,think=100ms,list,leave", o: scenario.Overrides{Clients: 2, Duration: time.Second},
			check: func(t *testing.T, p *scenario.Plan) {
				st := p.Flows[0].Steps
				if got := kinds(p); got != "create_room,join,ping,think,list_rooms,leave" {
					t.Fatalf("steps %s", got)
				}
				if stepkit.RoomOf(&st[1]).Kind != stepkit.RoomCreated || stepkit.SeriesOf(&st[2]).Count != 3 || st[3].Think.A != 100*time.Millisecond || st[4].Label != "list" {
					t.Errorf("join %v, ping %v, think %v, list labelled %q", st[1].Params, st[2].Params, st[3].Think, st[4].Label)
				}
			}},
		{name: "no protocol", flow: "list_rooms", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: append([]string{"--protocol is needed to run without a scenario file ("}, scenario.ProtocolNames()...)}, // whatever protocols are linked
		{name: "unknown protocol", proto: "udp-lobyb", flow: "list_rooms", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: slices.Concat([]string{`--protocol: unknown value "udp-lobyb" (want one of `}, scenario.ProtocolNames(), []string{`) (did you mean "udp-lobby"?)`})},
		{name: "no flow", proto: "udp-lobby", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{"--flow is needed"}},
		{name: "empty step", proto: "udp-lobby", flow: "list_rooms,,leave", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{`--flow "list_rooms,,leave": step 2 is empty`}},
		{name: "no duration", proto: "udp-lobby", flow: "list_rooms", o: scenario.Overrides{Rate: rateOf(1)},
			err: []string{"--duration is needed"}},
		{name: "no load", proto: "udp-lobby", flow: "list_rooms", o: scenario.Overrides{Duration: time.Second},
			err: []string{"--rate N/s (open model", "or --clients N (closed model"}},
		{name: "a scale", proto: "udp-lobby", flow: "list_rooms", o: scenario.Overrides{Rate: scenario.RateOverride{Scale: 2}, Duration: time.Second},
			err: []string{"--rate 2x scales a scenario's rate"}},
		{name: "unknown step", proto: "udp-lobby", flow: "list_room", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{`--flow: unknown step "list_room" (did you mean "list_rooms"?)`}},
		{name: "another protocol's step", proto: "udp-lobby", flow: "connect", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{`--flow: step "connect" is not a udp-lobby step (udp-lobby steps: `}},
		{name: "bare steps that need more", proto: "udp-lobby", flow: "think,barrier,list_rooms", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{"--flow: think: give exactly one of fixed", "--flow: barrier needs group_size of 2",
				"--flow: think, barrier cannot run bare (udp-lobby steps that cannot: barrier, expect, if, rate_probe, repeat, send, think): give a step's one value as KIND=VALUE"}},
		{name: "join created alone", proto: "udp-lobby", flow: "join=created", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{"--flow: join room: created needs a create_room/create step earlier in the flow"}},
		{name: "bad value", proto: "udp-lobby", flow: "ping=lots", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{`--flow: ping count must be a whole number, got "lots"`}},
		{name: "value that is YAML", proto: "udp-lobby", flow: "ping={count: 2}", o: scenario.Overrides{Rate: rateOf(1), Duration: time.Second},
			err: []string{`--flow: ping count must be a whole number, got "{count: 2}"`}},
		{name: "too long", proto: "udp-lobby", flow: "list_rooms", o: scenario.Overrides{Clients: 3, Duration: 48 * time.Hour},
			err: []string{"--clients 3 --duration 48h0m0s: load: the run lasts 48h0m0s, over the 24h0m0s limit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scenario.FromFlags(tc.proto, tc.flow, tc.o)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				tc.check(t, p)
				return
			}
			if err == nil || p != nil {
				t.Fatalf("plan %v, error %v; want an error", p, err)
			}
			rest := err.Error()
			for _, want := range tc.err {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("error %q\nlacks (in order) %q", err, want)
				}
				rest = rest[i+len(want):]
			}
		})
	}
}

// TestFromFlagsIsTheFile checks that the flags' plan is the plan of the
// scenario file saying the same: the same defaults (request policy, wait
// timeouts, max clients), from the one decoder.
func TestFromFlagsIsTheFile(t *testing.T) {
	fromFlags, err := scenario.FromFlags("udp-lobby", "create_room,join=created,wait_game_start,leave", scenario.Overrides{Rate: rateOf(20), Duration: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := scenario.Parse("x.yaml", []byte(`
name: "(command line)"
protocol: udp-lobby
load: {rate: 20/s, duration: 5s}
flows:
  - name: flow
    steps: [create_room, {join: created}, wait_game_start, leave]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*scenario.Plan{fromFlags, fromFile} {
		p.File = ""
		for i := range p.Flows {
			p.Flows[i].Line = 0
			for j := range p.Flows[i].Steps {
				p.Flows[i].Steps[j].Line = 0
			}
		}
	}
	if !reflect.DeepEqual(fromFlags, fromFile) {
		t.Errorf("from flags:\n%+v\nfrom the file:\n%+v", fromFlags, fromFile)
	}
}

func kinds(p *scenario.Plan) string {
	var out []string
	for _, s := range p.Flows[0].Steps {
		out = append(out, string(s.Kind))
	}
	return strings.Join(out, ",")
}

// FuzzFromFlags feeds arbitrary flags: never a panic, and a plan or an
// error, never both; a plan has the one flow with a step per comma.
func FuzzFromFlags(f *testing.F) {
	f.Add("udp-lobby", "list_rooms", int64(time.Second), 10.0, 0)
	f.Add("tcp-lobby", "connect,list_rooms=\"x\\n\",leave", int64(time.Second), 0.0, 3)
	f.Add("leviathan", "connect,join_server,think=1ms", int64(time.Minute), 0.0, 2)
	f.Add("udp-lobby", "create_room,join=created\nflows: []", int64(time.Second), 5.0, 0)
	f.Fuzz(func(t *testing.T, proto, flow string, d int64, rate float64, clients int) {
		o := scenario.Overrides{Duration: time.Duration(d), Rate: scenario.RateOverride{Absolute: rate}, Clients: clients}
		p, err := scenario.FromFlags(proto, flow, o)
		if (p == nil) == (err == nil) {
			t.Fatalf("plan %v and error %v", p, err)
		}
		if p != nil && (len(p.Flows) != 1 || len(p.Flows[0].Steps) != strings.Count(flow, ",")+1) {
			t.Fatalf("flow %q gave flows %+v", flow, p.Flows)
		}
	})
}
