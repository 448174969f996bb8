package tcpclient

import (
	"bytes"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

func (r played) message(name string) result.Series {
	for _, s := range r.run.Messages {
		if s.Name == name {
			return s
		}
	}
	return result.Series{}
}

// frames splits a stream into its frames.
func frames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	fr := tcpwire.NewFrameReader(bytes.NewReader(b), 0)
	var out [][]byte
	for {
		p, err := fr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the client's stream %x: %v", b, err)
		}
		out = append(out, bytes.Clone(p))
	}
}

// TestScriptSendsWhatStepsSend: a flow of built-in steps and the same flow
// as a script send the reference server the same frames, byte for byte,
// on one connection the script dials itself, and both are measured as
// requests of their messages without a violation.
func TestScriptSendsWhatStepsSend(t *testing.T) {
	const builtIn = `  - steps:
      - connect
      - list_rooms
      - create_room
      - list_rooms
      - disconnect
`
	const scripted = `  - steps:
      - send: {message: CONNECT_REQ, fields: {playerName: bot0}}
      - expect: {message: CONNECT_ACK, where: "success", capture: {hash: playerHash}}
      - send: LIST_ROOMS_REQ
      - expect: LIST_ROOMS_ACK
      - send: {message: CREATE_ROOM_REQ, fields: {roomName: room0, playerName: bot0}}
      - expect: {message: CREATE_ROOM_ACK, where: "playerHash == hash", capture: {room: roomId}}
      - expect: {message: ROOM_UPDATE, where: "playerCount == 1 && players[0].hash == hash"}
      - send: LIST_ROOMS_REQ
      - expect: {message: LIST_ROOMS_ACK, where: "any(rooms, .id == room)"}
      - send: DISCONNECT
`
	var got [2][][]byte
	for i, flow := range []string{builtIn, scripted} {
		relay := faultproxy.Relay(t, "tcp", referenceServer(t), faultproxy.Options{Record: true})
		r := runSessions(t, plan(t, "defaults: {timeout: 5s}", flow), relay.Addr(), 1)
		if r.errs[0] != nil {
			t.Fatalf("flow %d: %v", i, r.errs[0])
		}
		if v := r.violations(); len(v) != 0 {
			t.Errorf("flow %d: violations %v", i, v)
		}
		for msg, want := range map[string]int64{"CONNECT_REQ": 1, "LIST_ROOMS_REQ": 2, "CREATE_ROOM_REQ": 1} {
			if m := r.message(msg); m.Successes != want {
				t.Errorf("flow %d: %s measured %d times, want %d", i, msg, m.Successes, want)
			}
		}
		stream := bytes.Join(relay.Sent(), nil)
		if tot := r.run.Totals; tot.DataSent != int64(len(stream)) || tot.DataReceived == 0 {
			t.Errorf("flow %d: counted %d bytes sent (the relay got %d), %d received", i, tot.DataSent, len(stream), tot.DataReceived)
		}
		got[i] = frames(t, stream)
	}
	if len(got[0]) != 5 || len(got[0]) != len(got[1]) {
		t.Fatalf("built-in sent %d frames, the script %d; want 5 each", len(got[0]), len(got[1]))
	}
	for k := range got[0] {
		if !bytes.Equal(got[0][k], got[1][k]) {
			t.Errorf("frame %d: built-in % x, script % x", k, got[0][k], got[1][k])
		}
	}
}

// TestScriptFailsNamingWhatCame: an expect that gets another frame fails
// its step as unexpected, naming the message that came and its bytes; one
// that gets nothing fails as a timeout; one whose connection the server
// closes names that.
func TestScriptFailsNamingWhatCame(t *testing.T) {
	ref := referenceServer(t)
	for _, tt := range []struct {
		name, flow, reason, says string
		target                   netip.AddrPort
	}{
		{"another message", `  - steps:
      - send: LIST_ROOMS_REQ
      - expect: CREATE_ROOM_ACK
`, simclient.ReasonUnexpected, "got LIST_ROOMS_ACK (hex 02", ref},
		{"silence", `  - steps:
      - send: {message: CONNECT_REQ, fields: {playerName: quiet}}
      - expect: CONNECT_ACK
      - expect: {message: any, within: 200ms}
`, "timeout", "nothing came", ref},
		{"closed", `  - steps:
      - send: LIST_ROOMS_REQ
      - expect: LIST_ROOMS_ACK
`, simclient.ReasonClosed, "the lobby ended the connection", closingServer(t, ref, false)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runSessions(t, plan(t, "defaults: {timeout: 5s}", tt.flow), tt.target, 1)
			if r.errs[0] == nil || !strings.Contains(r.errs[0].Error(), tt.says) {
				t.Fatalf("error %v, want one saying %q", r.errs[0], tt.says)
			}
			var failed int64
			for _, s := range r.run.Steps {
				failed += s.FailuresByReason[tt.reason]
			}
			if failed != 1 {
				t.Errorf("steps %+v: want one failure %q", r.run.Steps, tt.reason)
			}
		})
	}
}

// TestScriptAndStepsShareState: the built-in steps after a script go on
// from what the script got: the room its CREATE_ROOM_REQ created is the
// group's (join: {room: created} may follow it), and the built-in steps
// judge the room's broadcasts (PLAYER_JOIN, PLAYER_READY, COUNTDOWN,
// GAME_START) knowing the room, its members and the client's hash:
// without that each would be a broadcast violation.
func TestScriptAndStepsShareState(t *testing.T) {
	const script = `      - send: {message: CONNECT_REQ, fields: {playerName: "p${client}"}, only: leader}
      - expect: {message: CONNECT_ACK, where: "success", only: leader}
      - send: {message: CREATE_ROOM_REQ, fields: {roomName: mixed, playerName: "p${client}"}, only: leader}
      - expect: {message: CREATE_ROOM_ACK, where: "roomId > 0", only: leader}
      - expect: {message: ROOM_UPDATE, only: leader}
`
	const match = `      - ready
      - barrier: 2
      - start: {only: leader}
      - wait_countdown
      - wait_game_start
      - disconnect
`
	for _, tc := range []struct {
		name, flow string
		steps      map[string]int64
	}{
		{"alone in the script's room", `
  - name: alone
    steps:
` + strings.ReplaceAll(script, ", only: leader", "") + strings.ReplaceAll(strings.ReplaceAll(match, "      - barrier: 2\n", ""), ": {only: leader}", ""),
			map[string]int64{"ready": 1, "start": 1, "wait_game_start": 1}},
		{"a member joins the script's room", `
  - name: mixed
    group_size: 2
    steps:
` + script + `      - connect: {only: members}
      - join: {room: created, only: members}
      - barrier: 2
` + match,
			map[string]int64{"join": 1, "ready": 2, "start": 1, "wait_game_start": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, "defaults: {timeout: 5s}", tc.flow)
			r := runSessions(t, p, referenceServer(t), p.Flows[0].GroupSize)
			for i, err := range r.errs {
				if err != nil {
					t.Errorf("session %d: %v", i, err)
				}
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations %v (%+v)", v, r.run.Violations)
			}
			for name, want := range tc.steps {
				if got := r.step(t, name).Successes; got != want {
					t.Errorf("%s successes = %d, want %d", name, got, want)
				}
			}
		})
	}
}
