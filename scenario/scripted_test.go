package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/script"
)

// scriptCatalog is a fake protocol's catalog, the messages of the
// scripting docs' example.
type scriptCatalog struct{}

func (scriptCatalog) Messages() []script.Message {
	room := script.Field{Name: "roomId", Kind: script.Int, Bits: 32}
	return []script.Message{
		{Name: "LOBBY_CREATE_ROOM", FromClient: true, Channel: "lobby", Fields: []script.Field{{Name: "seq", Kind: script.Int, Bits: 16, Auto: true}}},
		{Name: "LOBBY_ROOM_CREATED", Channel: "lobby", Fields: []script.Field{room, {Name: "port", Kind: script.Int, Bits: 16}}},
		{Name: "LOBBY_JOIN_ROOM", FromClient: true, Channel: "lobby", Fields: []script.Field{room, {Name: "name", Kind: script.Text, Max: 4}}},
		{Name: "LOBBY_JOIN_SUCCESS", Channel: "lobby", Fields: []script.Field{room}},
		{Name: "LOBBY_JOIN_FAILED", Channel: "lobby", Fields: []script.Field{room}},
		{Name: "LOBBY_LIST_ROOMS", FromClient: true, Channel: "lobby"},
		{Name: "LOBBY_ROOM_LIST", Channel: "lobby", Fields: []script.Field{{Name: "roomCount", Kind: script.Int, Bits: 16}}},
		{Name: "CLIENT_HELLO", FromClient: true, Channel: "instance"},
	}
}
func (scriptCatalog) NewSession(any) any { return nil }
func (scriptCatalog) Encode(any, string, map[string]any) ([]byte, error) {
	return nil, errors.New("not in a loader test")
}
func (scriptCatalog) Decode(any, string, []byte) script.Decoded { return script.Decoded{} }

const (
	scriptedProto  ProtocolName = "scripted-fake"
	scriptlessFake ProtocolName = "scriptless-fake"
)

func init() {
	for _, p := range []ProtocolSpec{{Name: scriptedProto, Catalog: scriptCatalog{}, ProbeScripts: true}, {Name: scriptlessFake}} {
		p.Order, p.Transport = 1000, "tcp"
		p.Steps = []StepSpec{{Kind: "list_rooms", Request: true}} // a documented name: the docs test lists every kind
		p.ProbeRequests = []StepKind{p.Steps[0].Kind}
		RegisterProtocol(p)
	}
}

// scriptedHead is a scenario of the fake protocol up to its steps, which
// start on line 7.
const scriptedHead = `protocol: scripted-fake
load: {rate: 10/s, duration: 2s}
defaults: {timeout: 750ms, retries: 2}
flows:
  - name: custom
    steps:
`

// example is the brief's example flow, from line 7.
const example = `      - send: {message: LOBBY_CREATE_ROOM}
      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0 && port > 0", capture: {room: roomId}}
      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}
      - expect: {message: [LOBBY_JOIN_SUCCESS, LOBBY_JOIN_FAILED], capture: {got: message}}
      - if: "got == 'LOBBY_JOIN_FAILED'"
        then: [{think: 100ms}]
      - repeat: {count: 3}
        steps:
          - send: {message: LOBBY_LIST_ROOMS}
          - expect: {message: LOBBY_ROOM_LIST, where: "roomCount >= 1"}
      - send: {raw: "00ff13370000000000000000", to: lobby}
      - expect: {silence: 300ms}
`

// TestScriptedExample: the example loads, each scripted step carrying its
// checked block, the nested ones inside their if and repeat.
func TestScriptedExample(t *testing.T) {
	p, err := Parse("s.yaml", []byte(scriptedHead+example))
	if err != nil {
		t.Fatal(err)
	}
	steps := p.Flows[0].Steps
	if len(steps) != 8 {
		t.Fatalf("%d steps, want 8", len(steps))
	}
	one := func(i int) script.Step {
		b, ok := steps[i].Params.(*script.Block)
		if !ok || len(b.Steps) != 1 {
			t.Fatalf("step %d: params %#v, want a block of one step", i, steps[i].Params)
		}
		return b.Steps[0]
	}
	if e := one(1).Expect; e == nil || e.Within != 750*time.Millisecond || len(e.Capture) != 1 || one(1).Line != 8 {
		t.Fatalf("expect: %+v, want within the flow's timeout, one capture, line 8", e)
	}
	if c := one(4).If.Then.Steps; len(c) != 1 || c[0].Call == nil || c[0].Call.Value.(Step).Think.A != 100*time.Millisecond {
		t.Fatalf("if's then: %+v, want the think as a call", c)
	}
	if r := one(5).Repeat; r.Count != 3 || len(r.Body.Steps) != 2 || one(5).Retries != 2 {
		t.Fatalf("repeat: %+v, want count 3 of 2 steps, retries 2", r)
	}
	if e := one(7).Expect; e.Silence != 300*time.Millisecond {
		t.Fatalf("silence %v", e.Silence)
	}
}

// TestScriptedBadInput: every problem of a script is an error at its
// line (an expression's at its column too), naming it.
func TestScriptedBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, steps string
		proto       ProtocolName
		want        string
		more        bool // other errors follow from it
	}{
		{"unknown message", `      - send: LOBBY_CRATE_ROOM`, "",
			`s.yaml:7: flow "custom": send: unknown message "LOBBY_CRATE_ROOM" (did you mean "LOBBY_CREATE_ROOM"?)`, false},
		{"unknown field", `      - send: {message: LOBBY_JOIN_ROOM, fields: {roomid: 1}}`, "",
			`s.yaml:7: flow "custom": send: LOBBY_JOIN_ROOM has no field "roomid" (did you mean "roomId"?)`, false},
		{"type mismatch", `      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "abc"}}`, "",
			`s.yaml:7: flow "custom": send: LOBBY_JOIN_ROOM.roomId: is an integer (0-4294967295), not "abc"`, false},
		{"out of range", "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: 4294967296}}", "",
			`s.yaml:7: flow "custom": send: LOBBY_JOIN_ROOM.roomId: 4294967296 is out of range (0-4294967295, 32 bits)`, false},
		{"capture before set", "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: \"${room}\"}}\n" +
			"      - expect: {message: LOBBY_ROOM_CREATED, capture: {room: roomId}}", "",
			`s.yaml:7: flow "custom": send: LOBBY_JOIN_ROOM.roomId: variable "room" is not set before this step`, false},
		{"expression does not compile", `      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0 &&"}`, "",
			`s.yaml:7:67: flow "custom": expect: expression "roomId > 0 &&": unexpected token EOF`, false},
		{"expression type error", `      - expect: {message: LOBBY_ROOM_CREATED, where: 'port == "x"'}`, "",
			`s.yaml:7:60: flow "custom": expect: expression "port == \"x\"": invalid operation: == (mismatched types uint64 and string)`, false},
		{"unknown field in an expression", "      - expect: {message: LOBBY_ROOM_CREATED, where: roomid > 0}", "",
			`s.yaml:7:54: flow "custom": expect: expression "roomid > 0": unknown name roomid`, false},
		{"raw not hex", `      - send: {raw: "00zz", to: lobby}`, "",
			`s.yaml:7: flow "custom": send: raw: "00zz" is not hex bytes`, false},
		{"unknown channel", `      - send: {raw: "00", to: lobyy}`, "",
			`s.yaml:7: flow "custom": send: to: unknown channel "lobyy" (channels: [lobby instance]) (did you mean "lobby"?)`, false},
		{"message and raw", `      - send: {message: LOBBY_LIST_ROOMS, raw: "00"}`, "",
			`s.yaml:7: flow "custom": send: give message or raw, not both`, false},
		{"send of nothing", `      - send: {to: lobby}`, "",
			`s.yaml:7: flow "custom": send: give message (a name) or raw (hex bytes)`, false},
		{"expect of nothing", `      - expect: {within: 1s}`, "",
			`s.yaml:7: flow "custom": expect: give message (a name, a list of names, or any) or silence`, false},
		{"silence with a message", `      - expect: {silence: 1s, message: LOBBY_ROOM_LIST}`, "",
			`s.yaml:7: flow "custom": expect: silence expects no message: message does not apply`, false},
		{"bad on_fail", `      - expect: {message: any, on_fail: contnue}`, "",
			`s.yaml:7: flow "custom": expect on_fail: unknown value "contnue" (want one of abort, continue, retry) (did you mean "continue"?)`, false},
		{"unknown key", `      - expect: {mesage: any}`, "",
			`s.yaml:7: unknown key "mesage" in the expect step of flow "custom" (did you mean "message"?)`, true},
		{"if without then", `      - if: "client > 0"`, "",
			`s.yaml:7: flow "custom": if: if needs then (steps)`, false},
		{"if's condition unknown", "      - if: \"got == 'x'\"\n        then: [{think: 1ms}]", "",
			`s.yaml:7:14: flow "custom": if: expression "got == 'x'": unknown name got`, false},
		{"a non-scripted step nested", "      - if: \"client > 0\"\n        then: [list_rooms]", "",
			`s.yaml:8: flow "custom": if: list_rooms cannot be inside then (only send, expect, if, repeat, think)`, false},
		{"nested bad field", "      - repeat: {count: 2}\n        steps:\n          - send: {message: LOBBY_JOIN_ROOM, fields: {name: toolong}}", "",
			`s.yaml:9: flow "custom": repeat: LOBBY_JOIN_ROOM.name: is 7 bytes, over its 4`, false},
		{"repeat count and while", "      - repeat: {count: 2, while: \"true\"}\n        steps: [{think: 1ms}]", "",
			`s.yaml:7: flow "custom": repeat: give count or while (not both)`, false},
		{"max on a count", "      - repeat: {count: 2, max: 3}\n        steps: [{think: 1ms}]", "",
			`s.yaml:7: flow "custom": repeat: max bounds a while; a count is its own bound`, false},
		{"protocol without a catalog", `      - send: LOBBY_LIST_ROOMS`, scriptlessFake,
			`s.yaml:7: flow "custom": send: scriptless-fake has no scripted steps (send, expect, if, repeat; protocols with them: `, false},
		{"probe: request and send", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, request: list_rooms, send: LOBBY_LIST_ROOMS, expect: LOBBY_ROOM_LIST}`, "",
			`s.yaml:7: flow "custom": rate_probe: give request (a built-in step) or send and expect (a message), not both`, false},
		{"probe: send without expect", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: LOBBY_LIST_ROOMS}`, "",
			`s.yaml:7: flow "custom": rate_probe: a scripted request needs both send (the message) and expect (the reply that answers it)`, false},
		{"probe: raw", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {raw: "00"}, expect: LOBBY_ROOM_LIST}`, "",
			`s.yaml:7: flow "custom": rate_probe: send: raw does not apply to a probe's request (its send takes message, fields and to)`, false},
		{"probe: capture", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: LOBBY_LIST_ROOMS, expect: {message: LOBBY_ROOM_LIST, capture: {n: roomCount}}}`, "",
			`s.yaml:7: flow "custom": rate_probe: expect: capture does not apply to a probe's request (its expect takes message and where)`, false},
		{"probe: unknown message", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: LOBBY_LIST_ROMS, expect: LOBBY_ROOM_LIST}`, "",
			`s.yaml:7: flow "custom": rate_probe: unknown message "LOBBY_LIST_ROMS" (did you mean "LOBBY_LIST_ROOMS"?)`, false},
		{"probe: where on an unknown field", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: LOBBY_LIST_ROOMS, expect: {message: LOBBY_ROOM_LIST, where: "rooms > 1"}}`, "",
			`s.yaml:7:119: flow "custom": rate_probe: expression "rooms > 1": unknown name rooms`, false},
		{"probe: a variable not set", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}, expect: LOBBY_JOIN_SUCCESS}`, "",
			`s.yaml:7: flow "custom": rate_probe: LOBBY_JOIN_ROOM.roomId: variable "room" is not set before this step`, false},
		{"udp-lobby probe: a sequenceId", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: LOBBY_LIST_ROOMS, fields: {sequenceId: 9}}, expect: LOBBY_ROOM_LIST}`, "udp-lobby",
			`s.yaml:7: flow "custom": rate_probe: send: sequenceId does not apply to a probe's request: the probe gives each request its own, which its reply echoes to be matched to it`, false},
		{"udp-lobby probe: a sequenceId from a capture", "      - send: LOBBY_CREATE_ROOM\n      - expect: {message: LOBBY_ROOM_CREATED, capture: {n: roomId}}\n" +
			`      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: CLIENT_PING, fields: {sequenceId: "${n}"}}, expect: SERVER_PONG}`, "udp-lobby",
			`s.yaml:9: flow "custom": rate_probe: send: sequenceId does not apply to a probe's request`, false},
		{"probe: a protocol without", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: LOBBY_LIST_ROOMS, expect: LOBBY_ROOM_LIST}`, scriptlessFake,
			`s.yaml:7: flow "custom": rate_probe: a scripted request (send, expect) is not built for scriptless-fake yet (it is for `, false},
		{"leviathan probe: unknown message", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: Request Ecko, expect: Response None}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: unknown message "Request Ecko" (did you mean "Request Echo"?)`, false},
		{"leviathan probe: unknown field", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: Request JoinServer, fields: {MasterServerTokn: 1}}, expect: Response ServerAllow}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: Request JoinServer has no field "MasterServerTokn" (did you mean "MasterServerToken"?)`, false},
		{"leviathan probe: where on an unknown field", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: Request Serverstatus, expect: {message: Response ServerStatus, where: "Player > 1"}}`, "leviathan",
			`s.yaml:7:129: flow "custom": rate_probe: expression "Player > 1": unknown name Player`, false},
		{"leviathan probe: a response", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: Response CloseConnection, expect: Response None}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: send: Response CloseConnection is a response, which nothing answers: a probe sends a request`, false},
		{"leviathan probe: a MessageNumber", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: Request Echo, fields: {MessageNumber: 9}}, expect: Response None}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: send: MessageNumber does not apply to a probe's request: each takes the connection's next, which its reply's ResponseTo names`, false},
		{"leviathan probe: a channel", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: {message: Request Echo, to: lobby}, expect: Response None}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: to: the protocol has one channel; leave to out`, false},
		{"leviathan probe: within", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: Request Echo, expect: {message: Response None, within: 1s}}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: expect: within does not apply to a probe's request (its expect takes message and where)`, false},
		{"leviathan probe: the server's message", `      - rate_probe: {from: 1/s, to: 9/s, over: 1s, send: Response ServerStatus, expect: Response None}`, "leviathan",
			`s.yaml:7: flow "custom": rate_probe: Response ServerStatus is a server's message`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := scriptedHead
			if tc.proto != "" {
				head = strings.Replace(head, string(scriptedProto), string(tc.proto), 1)
			}
			_, err := Parse("s.yaml", []byte(head+tc.steps+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) && !(tc.more && strings.Contains(err.Error(), "\n"+tc.want)) {
				t.Fatalf("got\n%v\nwant it to start\n%s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") && !tc.more {
				t.Fatalf("more than one error:\n%v", err)
			}
		})
	}
}

// TestScriptedProbe: a rate_probe's request written as a script is
// checked with the flow's captures before it, and carried on the step.
func TestScriptedProbe(t *testing.T) {
	p, err := Parse("s.yaml", []byte(scriptedHead+`      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, capture: {room: roomId}}
      - rate_probe:
          send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}
          expect: {message: [LOBBY_JOIN_SUCCESS], where: "roomId == room"}
          from: 10/s
          to: 100/s
          over: 2s
`))
	if err != nil {
		t.Fatal(err)
	}
	st := p.Flows[0].Steps[2]
	ps := st.Probe.Script
	if st.Kind != RateProbe || ps == nil || ps.Message() != "LOBBY_JOIN_ROOM" || ps.Channel() != "lobby" || st.Policy.Retries != 0 {
		t.Fatalf("step %+v", st)
	}
	if got, want := st.describe(), "LOBBY_JOIN_ROOM 10/s→100/s over 2s"; !strings.HasPrefix(got, want) {
		t.Errorf("described %q, want it to start %q", got, want)
	}
}

// TestExpectListShorthand: expect: [A, B] is expect: {message: [A, B]}.
func TestExpectListShorthand(t *testing.T) {
	p, err := Parse("s.yaml", []byte(scriptedHead+"      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: 1}}\n      - expect: [LOBBY_JOIN_SUCCESS, LOBBY_JOIN_FAILED]\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := p.Flows[0].Steps[1].Params.(*script.Block).Steps[0].Expect
	if len(e.Messages) != 2 || e.Messages[0].S != "LOBBY_JOIN_SUCCESS" || e.Messages[1].S != "LOBBY_JOIN_FAILED" || e.Any {
		t.Errorf("expect %+v", e)
	}
}
