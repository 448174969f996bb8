package scenario

import (
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"testing"
	"time"
)

// full sets every top-level key and every step parameter of udp-lobby.
const full = `name: everything
description: sets every key
target: 127.0.0.1:8080
protocol: udp-lobby
header_profile: rtype17
instance_ports: 8081-8180
seed: -9
load:
  model: open
  start_rate: 30/m
  stages:
    - {rate: 100/s, for: 2s}
    - {rate: 0/s, for: 0s}
  duration: 5s
  max_clients: 300
  arrivals: poisson
defaults: {timeout: 2s, retries: 1, retry_interval: 250ms}
impairment:
  drop: 1%
  delay: 5ms
  jitter: 2ms
  duplicate: 0.5%
  reorder: 1%
  out: {drop: 2%}
  seed: 99
source_addrs: [127.0.0.2-127.0.0.3, "127.0.0.9, 127.0.0.2"]
socket_buffer: 4MiB
flows:
  - name: all
    weight: 2.5
    group_size: 3
    steps:
      - list_rooms
      - create_room: {only: leader, timeout: 1s, retries: 0, retry_interval: 0}
      - join: {room: created, label: join_own}
      - join: 42
      - join
      - hello
      - instance_join
      - ready
      - ping: {count: 3, interval: 50ms}
      - barrier: {n: 2, timeout: 3s, only: members}
      - wait_game_start: 20s
      - think: 150ms
      - think: {uniform: [1s, 2s]}
      - think: {exponential: 300ms}
      - think: {normal: {mean: 1s, stddev: 100ms}}
      - malformed: {kinds: truncated, count: 4, share: 25%, to: instance, silence: 200ms, interval: 5ms}
      - rate_probe: {from: 10/s, to: 100/s, over: 2s, request: create_room, loss: 2%}
      - leave: {reason: 3}
      - disconnect
thresholds:
  - join_own.p99 < 10ms
  - rate_probe.limit > 5/s
on_violation: fail_step
`

func TestParseEveryKey(t *testing.T) {
	p, err := Parse("full.yaml", []byte(full))
	if err != nil {
		t.Fatal(err)
	}
	def := RequestPolicy{Timeout: 2 * time.Second, Retries: 1, RetryInterval: 250 * time.Millisecond}
	wait := func(d time.Duration) RequestPolicy { return RequestPolicy{Timeout: d} }
	ms := time.Millisecond
	want := &Plan{
		File: "full.yaml", Name: "everything", Description: "sets every key",
		Target: "127.0.0.1:8080", Protocol: UDPLobby, OnViolation: ViolationFailStep, Seed: -9,
		Load: LoadShape{Model: Open, Start: 0.5, Stages: []Stage{{100, 2 * time.Second}, {0, 0}},
			Duration: 5 * time.Second, MaxClients: 300, Arrivals: ArrivalsPoisson},
		Defaults: def,
		Impairment: Impairment{
			In:   Impair{Drop: 0.01, Delay: 5 * ms, Jitter: 2 * ms, Duplicate: 0.005, Reorder: 0.01},
			Out:  Impair{Drop: 0.02, Delay: 5 * ms, Jitter: 2 * ms, Duplicate: 0.005, Reorder: 0.01},
			Seed: 99,
		},
		SourceAddrs: []netip.Addr{
			netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.9"),
		},
		SocketBuffer: 4 << 20,
		Flows: []Flow{{Name: "all", Weight: 2.5, GroupSize: 3, Line: 29, Steps: []Step{
			{Kind: StepKind("list_rooms"), Label: "list_rooms", Only: All, Line: 33, Policy: def},
			{Kind: StepKind("create_room"), Label: "create_room", Only: Leader, Line: 34, Policy: RequestPolicy{Timeout: time.Second}},
			{Kind: StepKind("join"), Label: "join_own", Only: All, Line: 35, Policy: def, Params: "{Kind:created ID:0}"},
			{Kind: StepKind("join"), Label: "join", Only: All, Line: 36, Policy: def, Params: "{Kind:id ID:42}"},
			{Kind: StepKind("join"), Label: "join", Only: All, Line: 37, Policy: def, Params: "{Kind:random-waiting ID:0}"},
			{Kind: StepKind("hello"), Label: "hello", Only: All, Line: 38, Policy: def},
			{Kind: StepKind("instance_join"), Label: "instance_join", Only: All, Line: 39, Policy: def},
			{Kind: StepKind("ready"), Label: "ready", Only: All, Line: 40, Policy: def},
			{Kind: StepKind("ping"), Label: "ping", Only: All, Line: 41, Policy: def, Params: "{Count:3 Interval:50ms}"},
			{Kind: Barrier, Label: "barrier", Only: Members, Line: 42, Policy: wait(3 * time.Second), BarrierN: 2},
			{Kind: StepKind("wait_game_start"), Label: "wait_game_start", Only: All, Line: 43, Policy: wait(20 * time.Second)},
			{Kind: Think, Label: "think", Only: All, Line: 44, Think: ThinkTime{Dist: Fixed, A: 150 * ms}},
			{Kind: Think, Label: "think", Only: All, Line: 45, Think: ThinkTime{Dist: Uniform, A: time.Second, B: 2 * time.Second}},
			{Kind: Think, Label: "think", Only: All, Line: 46, Think: ThinkTime{Dist: Exponential, A: 300 * ms}},
			{Kind: Think, Label: "think", Only: All, Line: 47, Think: ThinkTime{Dist: Normal, A: time.Second, B: 100 * ms}},
			{Kind: Malformed, Label: "malformed", Only: All, Line: 48,
				Malformed: MalformedSpec{Count: 4, Interval: 5 * ms, Kinds: []MalformedKind{Truncated}, Share: 0.25, To: "instance", Silence: 200 * ms}},
			{Kind: RateProbe, Label: "rate_probe", Only: All, Line: 49, Policy: RequestPolicy{Timeout: 2 * time.Second, RetryInterval: 250 * time.Millisecond},
				Probe: RateProbeSpec{From: 10, To: 100, Over: 2 * time.Second, Request: StepKind("create_room"), Loss: 0.02}},
			{Kind: StepKind("leave"), Label: "leave", Only: All, Line: 50, Params: "{Reason:3}"},
			{Kind: StepKind("disconnect"), Label: "disconnect", Only: All, Line: 51},
		}}},
	}
	thr := p.Thresholds
	p.Thresholds = nil
	// The protocol's options are its own type (the protocol's package
	// parses them): what they say shows in the description.
	if p.Options == nil || p.Options.Describe() != ", header rtype17, instance ports 8081-8180" {
		t.Errorf("options %#v", p.Options)
	}
	want.Options = p.Options
	// A protocol's step kinds are its own (the scenario package names
	// none): what their parsers returned is compared as printed, and
	// every step has its kind's spec.
	for i := range p.Flows[0].Steps {
		st := &p.Flows[0].Steps[i]
		if st.Spec == nil || st.Spec.Kind != st.Kind {
			t.Errorf("step %d (%s): spec %+v", i, st.Kind, st.Spec)
		}
		st.Spec = nil
		if st.Params != nil {
			st.Params = fmt.Sprintf("%+v", st.Params)
		}
	}
	if !reflect.DeepEqual(p, want) {
		gotF, wantF := p.Flows, want.Flows
		p.Flows, want.Flows = nil, nil
		if !reflect.DeepEqual(p, want) {
			t.Errorf("plan:\n got %+v\nwant %+v", p, want)
		}
		for i := range min(len(gotF[0].Steps), len(wantF[0].Steps)) {
			if !reflect.DeepEqual(gotF[0].Steps[i], wantF[0].Steps[i]) {
				t.Errorf("step %d:\n got %+v\nwant %+v", i, gotF[0].Steps[i], wantF[0].Steps[i])
			}
		}
		gotF[0].Steps, wantF[0].Steps = nil, nil
		if !reflect.DeepEqual(gotF, wantF) {
			t.Errorf("flows:\n got %+v\nwant %+v", gotF, wantF)
		}
	}
	if len(thr) != 2 || thr[0].Metric != "join_own.p99" || thr[0].Line != 53 || thr[1].Unit != Rate {
		t.Errorf("thresholds %+v", thr)
	}
}

func TestParseDefaults(t *testing.T) {
	if _, err := Parse("dir/short.yml", []byte("protocol: udp-lobby\nload: {clients: 3, duration: 1s}\nflows: [{steps: [list_rooms, wait_game_start, think]}]\n")); err == nil {
		t.Fatal("think without a time accepted")
	}
	p, err := Parse("dir/short.yml", []byte("protocol: udp-lobby\nload: {clients: 3, duration: 1s}\nflows: [{steps: [list_rooms, wait_game_start]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "short" || p.Options == nil || p.Options.Describe() != ", header spec" || p.Seed != 1 || p.Defaults != DefaultPolicy ||
		p.Load.Model != Closed || p.Load.MaxClients != 3 || p.Flows[0].Name != "flow1" || p.Flows[0].Weight != 1 ||
		p.Flows[0].Steps[1].Policy.Timeout != DefaultWaitTimeout || !p.Impairment.IsZero() {
		t.Errorf("defaults not applied: %+v", p)
	}
	if p.Defaults != (RequestPolicy{5 * time.Second, 3, time.Second}) {
		t.Errorf("udp-lobby.md §11 policy is 5s/3/1s, got %+v", p.Defaults)
	}
}

func TestThinkSample(t *testing.T) {
	ms := time.Millisecond
	r := NewRand(1, 0)
	for _, tt := range []struct {
		th       ThinkTime
		lo, hi   time.Duration
		meanWant time.Duration
	}{
		{ThinkTime{Dist: Fixed, A: 100 * ms}, 100 * ms, 100 * ms, 100 * ms},
		{ThinkTime{Dist: Uniform, A: 100 * ms, B: 300 * ms}, 100 * ms, 300 * ms, 200 * ms},
		{ThinkTime{Dist: Exponential, A: 100 * ms}, 0, maxThink, 100 * ms},
		{ThinkTime{Dist: Normal, A: 100 * ms, B: 10 * ms}, 0, maxThink, 100 * ms},
	} {
		var sum time.Duration
		const n = 20000
		for range n {
			d := tt.th.Sample(r)
			if d < tt.lo || d > tt.hi {
				t.Fatalf("%v: sample %v outside [%v, %v]", tt.th.Dist, d, tt.lo, tt.hi)
			}
			sum += d
		}
		if mean := sum / n; (mean - tt.meanWant).Abs() > tt.meanWant/20 {
			t.Errorf("%v: mean %v, want ≈%v", tt.th.Dist, mean, tt.meanWant)
		}
	}
	if d := (ThinkTime{Dist: Normal, A: 0, B: time.Second}).Sample(r); d < 0 {
		t.Errorf("normal sample %v below 0", d)
	}
}

func TestPickFlow(t *testing.T) {
	p := &Plan{Flows: []Flow{{Weight: 3}, {Weight: 1}}}
	for _, c := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.74, 0}, {0.75, 1}, {0.999999, 1}} {
		if got := p.PickFlow(c.u); got != c.want {
			t.Errorf("PickFlow(%v) = %d, want %d", c.u, got, c.want)
		}
	}
}

func TestParseTCPAndLeviathanSteps(t *testing.T) {
	tcp := `protocol: tcp-lobby
target: localhost:7777
load: {clients: 4, duration: 3s}
flows:
  - group_size: 4
    steps:
      - connect: {name: alice, timeout: 1s}
      - list
      - create: host-room
      - join: {room: created, only: members}
      - ready
      - start: {only: leader}
      - wait_countdown
      - wait_game_start: {timeout: 9s, label: game_start}
      - malformed: {kinds: [wrong_length, unknown_type], count: 2}
      - disconnect
`
	p, err := Parse("tcp.yaml", []byte(tcp))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Flows[0].Steps
	if params(st[0]) != "{Name:alice}" || st[0].Policy.Timeout != time.Second || params(st[2]) != "{Name:host-room}" ||
		st[3].Only != Members || st[5].Only != Leader || st[6].Policy.Timeout != DefaultWaitTimeout ||
		st[7].Label != "game_start" || st[7].Policy.Timeout != 9*time.Second ||
		!reflect.DeepEqual(st[8].Malformed.Kinds, []MalformedKind{WrongLength, UnknownType}) || st[8].Malformed.Count != 2 || st[9].Kind != StepKind("disconnect") {
		t.Errorf("tcp steps: %+v", st)
	}
	if _, ok := KnownMetrics(p)["game_start.p99"]; !ok {
		t.Error("label game_start has no metrics")
	}

	lev := `protocol: leviathan
load: {rate: 5/s, duration: 2s}
impairment: {in: {delay: 1ms}}
flows:
  - steps:
      - connect
      - join_server
      - join_game: {options: "mode=1"}
      - echo: 4
      - status
      - malformed
      - rate_probe: {from: 1/s, to: 10/s, over: 1s}
      - close
`
	p, err = Parse("lev.yaml", []byte(lev))
	if err != nil {
		t.Fatal(err)
	}
	st = p.Flows[0].Steps
	if params(st[2]) != "{Options:mode=1}" || params(st[3]) != "{Count:4 Interval:100ms}" ||
		!reflect.DeepEqual(st[5].Malformed.Kinds, MalformedKinds(Leviathan)) || st[5].Malformed.Silence != time.Second ||
		st[6].Probe.Request != StepKind("echo") || st[6].Probe.Loss != 0.01 || st[6].Policy.Retries != 0 || st[7].Kind != StepKind("disconnect") || st[7].Label != "close" {
		t.Errorf("leviathan steps: %+v", st)
	}
	if p.Impairment.In.Delay != time.Millisecond || !p.Impairment.Out.IsZero() || p.Options != nil {
		t.Errorf("leviathan plan: %+v", p)
	}
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("../scenarios/soak.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("soak.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// params prints what a protocol's parser read of a step's parameters.
func params(st Step) string { return fmt.Sprintf("%+v", st.Params) }
