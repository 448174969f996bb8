package udpclient

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestScriptSendsWhatStepsSend: a flow of built-in steps and the same flow
// as a script send the reference server the same datagrams, byte for
// byte, in both header profiles, and both are measured as requests of
// their messages without a violation.
func TestScriptSendsWhatStepsSend(t *testing.T) {
	const builtIn = `  - steps:
      - list_rooms
      - create_room
      - list_rooms
`
	const scripted = `  - steps:
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0", capture: {room: roomId}}
      - send: LOBBY_LIST_ROOMS
      - expect: {message: LOBBY_ROOM_LIST, where: "any(rooms, .roomId == room)"}
`
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) {
			var got [2][][]byte
			for i, flow := range []string{builtIn, scripted} {
				srv := referenceServer(t, func(c *udpserver.Config) { c.Profile = prof })
				relay := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Record: true})
				p := plan(t, "header_profile: "+prof.String()+"\ndefaults: {timeout: 2s}", flow)
				r := runSessions(t, p, relay.Addr(), 1, simclient.Options{})
				if r.errs[0] != nil {
					t.Fatalf("flow %d: %v", i, r.errs[0])
				}
				if v := r.violations(); len(v) != 0 {
					t.Errorf("flow %d: violations %v", i, v)
				}
				if m := r.message("LOBBY_LIST_ROOMS"); m.Successes != 2 {
					t.Errorf("flow %d: LOBBY_LIST_ROOMS measured %d times, want 2", i, m.Successes)
				}
				got[i] = relay.Sent()
			}
			if len(got[0]) != 3 || len(got[0]) != len(got[1]) {
				t.Fatalf("built-in sent %d datagrams, the script %d; want 3 each", len(got[0]), len(got[1]))
			}
			for k := range got[0] {
				if !bytes.Equal(got[0][k], got[1][k]) {
					t.Errorf("datagram %d: built-in % x, script % x", k, got[0][k], got[1][k])
				}
			}
		})
	}
}

// TestScriptDuplicateReplies: against a lobby that answers every request
// twice, a script's expects take the answer to their own request, each
// second copy is a U-REPLY-DUP, and the flow passes (as the built-in
// steps do), where a script that took the next datagram blindly failed
// its join on the create's copy.
func TestScriptDuplicateReplies(t *testing.T) {
	srv := referenceServer(t, nil)
	relay := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Copies: 2})
	p := plan(t, "defaults: {timeout: 2s}", `  - steps:
      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, capture: {room: roomId}}
      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}
      - expect: LOBBY_JOIN_SUCCESS
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`)
	r := runSessions(t, p, relay.Addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if v := r.violations(); v[RuleUReplyDup] < 2 {
		t.Errorf("violations %v, want the duplicates as %s", v, RuleUReplyDup)
	}
}

// TestScriptThinksInsideARepeat: a think inside a repeat pauses the
// script on the session's schedule, and the requests around it are
// measured.
func TestScriptThinksInsideARepeat(t *testing.T) {
	srv := referenceServer(t, nil)
	p := plan(t, "defaults: {timeout: 2s}", `  - steps:
      - repeat: {count: 2}
        steps:
          - send: LOBBY_LIST_ROOMS
          - expect: LOBBY_ROOM_LIST
          - think: 1ms
`)
	r := runSessions(t, p, srv.Addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if m := r.message("LOBBY_LIST_ROOMS"); m.Successes != 2 {
		t.Errorf("LOBBY_LIST_ROOMS measured %d times, want 2", m.Successes)
	}
}

// TestScriptFailsNamingWhatCame: an expect that gets another message fails
// its step as unexpected, naming the message that came and its bytes; one
// that gets nothing fails as a timeout. The send it awaited fails so too
// under its message's key, which counts its every send.
func TestScriptFailsNamingWhatCame(t *testing.T) {
	srv := referenceServer(t, nil)
	for _, tt := range []struct {
		name, flow, reason, says, message string
	}{
		{"another message", `  - steps:
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_CREATED
`, simclient.ReasonUnexpected, "got LOBBY_ROOM_LIST", "LOBBY_LIST_ROOMS"},
		{"silence", `  - steps:
      - send: {raw: "00"}
      - expect: {message: any, within: 200ms}
`, "timeout", "nothing came", "raw"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, "defaults: {timeout: 2s}", tt.flow)
			r := runSessions(t, p, srv.Addr(), 1, simclient.Options{})
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
			if m := r.message(tt.message); m.Requests != 1 || m.FailuresByReason[tt.reason] != 1 {
				t.Errorf("message %+v: want its one send failed %q", m, tt.reason)
			}
		})
	}
}

// TestScriptContinueCounts: an expect that said on_fail: continue and got
// nothing fails as a timeout, its send too under its message, and the
// script goes on to its next request.
func TestScriptContinueCounts(t *testing.T) {
	srv := referenceServer(t, nil)
	p := plan(t, "defaults: {timeout: 2s}", `  - steps:
      - send: {raw: "00"}
      - expect: {message: any, within: 200ms, on_fail: continue}
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`)
	r := runSessions(t, p, srv.Addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatalf("the session failed: %v", r.errs[0])
	}
	var timeouts int64
	for _, s := range r.run.Steps {
		timeouts += s.FailuresByReason["timeout"]
	}
	if timeouts != 1 {
		t.Errorf("steps %+v: want one timeout", r.run.Steps)
	}
	if m := r.message("raw"); m.Requests != 1 || m.FailuresByReason["timeout"] != 1 {
		t.Errorf("raw %+v: want its send failed as a timeout", m)
	}
	if m := r.message("LOBBY_LIST_ROOMS"); m.Successes != 1 {
		t.Errorf("LOBBY_LIST_ROOMS %+v: want the next request answered", m)
	}
}

// TestScriptCutSilent: a scripted send the end of the run cut while its
// expect had waited more than result.SilentAfter counts under its
// message's key as cut and silent (the default silent gate's figure);
// one a silence followed wanted no reply and is not counted at all.
func TestScriptCutSilent(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) { f.silent = true })
	p := plan(t, "defaults: {timeout: 1h}", `  - steps:
      - send: {raw: "00"}
      - expect: {silence: 1ms}
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`)
	run := cutSession(t, f, p, func() {
		for i := 0; i < 2000 && f.count(udpwire.LobbyListRooms) < 1; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(result.SilentAfter + 100*time.Millisecond) // at least this long unanswered
	})
	got := played{run: run}
	if m := got.message("LOBBY_LIST_ROOMS"); m.Requests != 1 || m.Cut != 1 || m.CutSilent != 1 {
		t.Errorf("LOBBY_LIST_ROOMS %+v: want its send cut silent", m)
	}
	for _, m := range run.Messages {
		if m.Name == "raw" && m.Requests != 0 {
			t.Errorf("raw %+v: a send that wanted no reply counted as a request", m)
		}
	}
	if n := run.SilentCuts(); n != 1 {
		t.Errorf("the run counts %d silent cuts, want 1", n)
	}
}

// TestScriptAndStepsShareState: a flow that mixes built-in and scripted
// steps takes sequence ids from one counter (the reference server answers
// a reused id with its cached reply, as to a retry: a built-in step after
// a script used to send the script's ids again), and the built-in steps
// after a script go on from the room, instance and game the script got.
func TestScriptAndStepsShareState(t *testing.T) {
	tests := []struct {
		name, flow string
		seqs       []uint16 // the sequence ids the lobby saw, in order
	}{
		{"one counter", `  - steps:
      - list_rooms
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
      - list_rooms
      - create_room
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`, []uint16{1, 2, 3, 4, 5}},
		{"a script's room and instance", `  - steps:
      - send: LOBBY_CREATE_ROOM
      - expect: LOBBY_ROOM_CREATED
      - join: {room: created}
      - send: CLIENT_HELLO
      - expect: SERVER_HELLO
      - send: CLIENT_JOIN_REQUEST
      - expect: SERVER_JOIN_ACCEPT
      - ready
      - wait_game_start
      - list_rooms
      - leave
`, []uint16{1, 2, 6}}, // HELLO 3, JOIN_REQUEST 4 and READY 5 went to the instance
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The create's and the join's seats: the instance waits for
			// the second (held 5 s by default) before its countdown.
			srv := referenceServer(t, func(c *udpserver.Config) { c.SeatHold = 100 * time.Millisecond })
			relay := faultproxy.Relay(t, "udp", srv.Addr(), faultproxy.Options{Record: true})
			p := plan(t, "defaults: {timeout: 2s}", tc.flow)
			r := runSessions(t, p, relay.Addr(), 1, simclient.Options{})
			if r.errs[0] != nil {
				t.Fatal(r.errs[0])
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
			var seqs []uint16
			for _, b := range relay.Sent() {
				var m udpwire.Message
				if err := (udpwire.Decoder{Profile: udpwire.ProfileSpec}).Decode(b, &m); err != nil {
					t.Fatalf("% x: %v", b, err)
				}
				seqs = append(seqs, m.Seq)
			}
			if !slices.Equal(seqs, tc.seqs) {
				t.Errorf("the lobby saw sequence ids %v, want %v", seqs, tc.seqs)
			}
			if n := srv.Stats().Replayed; n != 0 {
				t.Errorf("the server answered %d requests from its cache, as retries", n)
			}
		})
	}
}
