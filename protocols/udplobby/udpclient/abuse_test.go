package udpclient

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/bundled"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

func TestMalformedSilentServer(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", `  - steps:
      - malformed: {count: 40, share: 50%, silence: 50ms}
`)
	r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if v := r.violations(); len(v) != 0 {
		t.Fatalf("violations against a silent-on-malformed server: %v", v)
	}
	var sent int64
	for _, m := range r.run.Malformed {
		sent += m.Sent
		if m.UnexpectedReplies != 0 || m.LivenessChecks != 1 || m.LivenessKept != 1 {
			t.Errorf("%+v", m)
		}
	}
	valid := r.step(t, "malformed").Successes - 1 // minus the liveness check
	if sent+valid != 40 || sent < 10 || valid < 10 {
		t.Errorf("sent %d malformed + %d valid, want 40 in all, both kinds well represented", sent, valid)
	}
	if got := int64(f.count(udpwire.LobbyListRooms)); got != valid+1 {
		t.Errorf("server decoded %d valid lists, want %d: a malformed packet was accepted", got, valid+1)
	}
}

// TestMalformedAnswered: against a lobby that answers everything it can
// frame, even garbage, each malformed packet's reply is a violation, with
// the reply's bytes, and an unexpected reply of its kind, sent by the
// built-in malformed step or by a script's malformed send alike (for
// which a reply is no answer: the silence after them holds).
func TestMalformedAnswered(t *testing.T) {
	echo := newRawResponder(t, func(b []byte) []byte {
		if len(b) < 12 {
			return nil
		}
		out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, uint16(b[2])<<8|uint16(b[3]), nil)
		return out
	})
	for _, tc := range []struct{ name, flow string }{
		{"built-in", `  - steps:
      - malformed: {count: 10, kinds: [bad_crc, unknown_type], silence: 50ms}
`},
		{"scripted", `  - steps:
      - repeat: {count: 10}
        steps: [{send: {message: LOBBY_LIST_ROOMS, malformed: [bad_crc, unknown_type]}}]
      - expect: {silence: 50ms}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runSessions(t, plan(t, "", tc.flow), echo, 1, simclient.Options{Tick: time.Millisecond})
			if r.errs[0] != nil {
				t.Fatal(r.errs[0])
			}
			if r.violations()[RuleUMalformedAns] != 10 {
				t.Fatalf("violations %v, want 10 %s", r.violations(), RuleUMalformedAns)
			}
			var sent, unexp int64
			for _, m := range r.run.Malformed {
				sent, unexp = sent+m.Sent, unexp+m.UnexpectedReplies
			}
			if sent != 10 || unexp != 10 {
				t.Fatalf("sent %d, unexpected replies %d, want 10 and 10 (%+v)", sent, unexp, r.run.Malformed)
			}
			for _, v := range r.run.Violations {
				if v.Rule == RuleUMalformedAns && (len(v.Samples) == 0 || !strings.HasPrefix(v.Samples[0].Packet, "0241")) {
					t.Errorf("%s samples %+v, want the reply's bytes (02 41 …)", v.Rule, v.Samples)
				}
			}
		})
	}
}

// newRawResponder answers every datagram with reply(datagram), if not nil.
func newRawResponder(t testing.TB, reply func([]byte) []byte) netip.AddrPort {
	return newCopyingResponder(t, 1, reply)
}

// newCopyingResponder is newRawResponder sending each reply copies times.
func newCopyingResponder(t testing.TB, copies int, reply func([]byte) []byte) netip.AddrPort {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	f.conn.Close() // reuse only the helper's cleanup; open our own socket
	e := newEchoServer(t, 0)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := e.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if out := reply(buf[:n]); out != nil {
				for range copies {
					e.conn.WriteToUDPAddrPort(out, from)
				}
			}
		}
	}()
	return e.addr()
}

func TestRateProbeFindsLimit(t *testing.T) {
	// The lobby answers at most 50 lists per second (a token bucket of 50/s,
	// burst 5); the probe ramps 20/s → 200/s over 1s.
	var tokens atomic.Int64
	tokens.Store(5)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if tokens.Add(1) > 5 {
					tokens.Store(5)
				}
			}
		}
	}()
	addr := newRawResponder(t, func(b []byte) []byte {
		if tokens.Add(-1) < 0 {
			tokens.Store(0)
			return nil
		}
		out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, uint16(b[2])<<8|uint16(b[3]), nil)
		return out
	})
	p := plan(t, "", `  - steps:
      - rate_probe: {from: 20/s, to: 200/s, over: 1s, timeout: 100ms, loss: 5%}
`)
	fd, _ := probeFinding(t, p, addr)
	if fd.Source != "rate_probe" || fd.Sent != 110 || fd.Limited == 0 || fd.Accepted+fd.Limited != fd.Sent {
		t.Errorf("finding %+v", fd)
	}
	if fd.ObservedLimitPerSec < 20 || fd.ObservedLimitPerSec > 80 {
		t.Errorf("observed limit %.1f/s, want about 50/s (%s)", fd.ObservedLimitPerSec, fd.Note)
	}
}

// TestRateProbeDuplicate: a lobby that answers each of the probe's
// requests twice breaks U-REPLY-DUP once a request (the probe dropped
// the second reply unsaid), and the probe still counts each request
// once, answered.
func TestRateProbeDuplicate(t *testing.T) {
	addr := newCopyingResponder(t, 2, func(b []byte) []byte {
		out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, uint16(b[2])<<8|uint16(b[3]), nil)
		return out
	})
	p := plan(t, "", `  - steps:
      - rate_probe: {from: 10/s, to: 100/s, over: 500ms, timeout: 200ms}
`)
	fd, r := probeFinding(t, p, addr)
	if fd.Sent != 27 || fd.Accepted != 27 || fd.Limited != 0 {
		t.Errorf("finding %+v, want 27 sent and answered", fd)
	}
	if got := r.violations()[RuleUReplyDup]; got != 27 {
		t.Errorf("violations %v, want 27 %s", r.violations(), RuleUReplyDup)
	}
}

// probeFinding plays p, one session against addr, and returns its one
// rate-limit finding.
func probeFinding(t *testing.T, p *scenario.Plan, addr netip.AddrPort) (result.RateLimitFinding, played) {
	t.Helper()
	r := runSessions(t, p, addr, 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if len(r.run.RateLimits) != 1 {
		t.Fatalf("rate limit findings %+v", r.run.RateLimits)
	}
	return r.run.RateLimits[0], r
}

func TestRateProbeNoLimit(t *testing.T) {
	e := newEchoServer(t, 1)
	p := plan(t, "", `  - steps:
      - rate_probe: {from: 10/s, to: 100/s, over: 500ms, timeout: 200ms}
`)
	fd, _ := probeFinding(t, p, e.addr())
	if fd.ObservedLimitPerSec != 0 || fd.Limited != 0 || fd.Sent != 27 {
		t.Errorf("finding %+v, want no limit and 27 sent", fd)
	}
}

// TestRateProbeScripted: a rate_probe's request written as a script
// sends its message with the flow's captures, and a reply is an answer
// only when its expect takes it (the message, the where), a refusal
// otherwise. The lobby creates room 7 and lets a JOIN_ROOM into room 7
// only (JOIN_FAILED otherwise); each case's probe sends 27 requests.
func TestRateProbeScripted(t *testing.T) {
	t.Parallel()        // waits on its probes
	var joined sync.Map // room ids the JOIN_ROOMs named
	addr := newRawResponder(t, func(b []byte) []byte {
		var m udpwire.Message
		if err := (udpwire.Decoder{Profile: udpwire.ProfileSpec, Dir: udpwire.ClientToServer}).Decode(b, &m); err != nil {
			return nil
		}
		switch {
		case m.Type == udpwire.LobbyCreateRoom:
			return udpwire.AppendRoomCreated(nil, udpwire.ProfileSpec, m.Seq, 7, 9000)
		case m.Type == udpwire.LobbyJoinRoom && m.RoomID == 7:
			joined.Store(m.RoomID, true)
			return udpwire.AppendJoinSuccess(nil, udpwire.ProfileSpec, m.Seq, 7, 9000)
		case m.Type == udpwire.LobbyJoinRoom:
			joined.Store(m.RoomID, true)
			return udpwire.AppendJoinFailed(nil, udpwire.ProfileSpec, m.Seq)
		}
		return nil
	})
	for _, tc := range []struct {
		name, send, expect string
		answered           int64
		refusal            string // the first refusal the note names: its type, and sequence id 2 (the create took 1)
	}{
		{"the captured room", `{message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}`, `{message: LOBBY_JOIN_SUCCESS, where: "roomId == room"}`, 27, ""},
		{"another message", `{message: LOBBY_JOIN_ROOM, fields: {roomId: 8}}`, `LOBBY_JOIN_SUCCESS`, 0, "LOBBY_JOIN_FAILED (02 46 00 02 "},
		{"a where that fails", `{message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}`, `{message: LOBBY_JOIN_SUCCESS, where: "roomId == room + 1"}`, 0, "LOBBY_JOIN_SUCCESS (02 45 00 02 "},
		{"either message", `{message: LOBBY_JOIN_ROOM, fields: {roomId: 8}}`, `[LOBBY_JOIN_SUCCESS, LOBBY_JOIN_FAILED]`, 27, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, "", `  - steps:
      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, capture: {room: roomId}}
      - rate_probe: {from: 10/s, to: 100/s, over: 500ms, timeout: 1s, send: `+tc.send+`, expect: `+tc.expect+`}
`)
			fd, r := probeFinding(t, p, addr)
			if fd.Sent != 27 || fd.Accepted != tc.answered || fd.Limited != 27-tc.answered {
				t.Errorf("finding %+v, want 27 sent, %d answered", fd, tc.answered)
			}
			if refused := fmt.Sprintf("%d refused, 0 lost", 27-tc.answered); !strings.Contains(fd.Note, refused) {
				t.Errorf("note %q, want %q", fd.Note, refused)
			}
			if i := strings.Index(fd.Note, "the first refusal: "); tc.refusal == "" && i >= 0 || tc.refusal != "" && !strings.Contains(fd.Note, "the first refusal: "+tc.refusal) {
				t.Errorf("note %q, want its first refusal %q", fd.Note, tc.refusal)
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
	joined.Range(func(k, _ any) bool {
		if k != uint32(7) && k != uint32(8) {
			t.Errorf("a JOIN_ROOM named room %v, want 7 (captured) or 8 (given)", k)
		}
		return true
	})
}

// TestImpairedFlow runs a full match through outgoing and incoming loss,
// duplication, delay and reordering: retries recover the losses and the
// duplicates are not taken for violations.
func TestImpairedFlow(t *testing.T) {
	t.Parallel() // waits on its retries; asserts counts (TestMain)
	f := newFakeLobby(t, udpwire.ProfileSpec)
	// Members wait up to about timeout × (retries + 1) for the leader's
	// room: 25 ms gave them 285 ms, and a loaded machine took 500 ms for
	// the create. 200 ms gives them 2.2 s, and a lost datagram still costs
	// only 200 ms of test time.
	p := plan(t, `seed: 3
defaults: {timeout: 200ms, retries: 10, retry_interval: 1ms}
impairment: {drop: 10%, duplicate: 10%, delay: 2ms, jitter: 1ms, reorder: 5%}`, `
  - group_size: 2
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - barrier: 2
      - ping: {count: 10, interval: 1ms}
`)
	r := runSessions(t, p, f.addr(), 4, simclient.Options{})
	for i, err := range r.errs {
		if err != nil {
			t.Errorf("session %d: %v", i, err)
		}
	}
	if v := r.violations(); len(v) != 0 {
		t.Errorf("violations under impairment: %v", v)
	}
	if st := r.step(t, "ping"); st.Successes != 40 || st.Retries == 0 {
		t.Errorf("ping: %d successes, %d retries; want 40 and some retries", st.Successes, st.Retries)
	}
}

func TestAutoProfile(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileRType17)
	// The timeout is how long the spec header has to fail before rtype17
	// is tried, and how long rtype17's reply may take: 500 ms, so a loaded
	// machine's slow reply does not draw a third send (50 ms could).
	p := plan(t, "header_profile: auto\ndefaults: {timeout: 500ms, retries: 3, retry_interval: 1ms}", "  - steps: [list_rooms, list_rooms]\n")
	r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	st := r.step(t, "list_rooms")
	if st.Successes != 2 || st.Retries != 1 {
		t.Fatalf("list_rooms %d ok %d retries: want 2 and 1 (spec first, then rtype17, then known)", st.Successes, st.Retries)
	}
}

// TestImpairedLeaveSent: a datagram that draws no reply (CLIENT_DISCONNECT)
// is sent even when the impairment delays it and the session ends right
// after: it used to wait in the queue for a receive that never came, and
// the server kept the room.
func TestImpairedLeaveSent(t *testing.T) {
	var leaves atomic.Int64
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) {
		f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
			if m.Type == udpwire.ClientDisconnect {
				leaves.Add(1)
			}
			return def
		}
	})
	p := plan(t, `impairment: {delay: 5ms, jitter: 2ms}`, `
  - steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - leave
`)
	r := runSessions(t, p, f.addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	// The datagram left before the session ended; wait for the fake to
	// read it (an event, bounded so a lost one fails rather than hangs).
	for end := time.Now().Add(10 * time.Second); leaves.Load() == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if n := leaves.Load(); n != 1 {
		t.Errorf("server got %d CLIENT_DISCONNECT, want 1", n)
	}
}

// TestScriptAllow: a lobby answering every datagram with one of a type
// nobody defines: the reply to a script's raw bytes breaks U-TYPE-UNKNOWN
// unless the raw send allows it, and an allowed rule that is not the
// protocol's is a load error at its line, naming the nearest.
func TestScriptAllow(t *testing.T) {
	odd := newRawResponder(t, func(b []byte) []byte {
		h := udpwire.Header{PacketType: udpwire.ServerToClient, Type: 0x7E, Seq: 1}
		return udpwire.AppendRaw(nil, udpwire.ProfileSpec, h, nil)
	})
	const raw = "0140000100000000d0e3833e" // a LOBBY_LIST_ROOMS of sequence id 1
	for _, tc := range []struct {
		name, allow string
		violations  int64
	}{
		{"allowed", ", allow: [U-TYPE-UNKNOWN]", 0},
		{"not allowed", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, "header_profile: spec", `  - steps:
      - send: {raw: "`+raw+`"`+tc.allow+`}
      - expect: any
`)
			r := runSessions(t, p, odd, 1, simclient.Options{})
			if r.errs[0] != nil {
				t.Fatal(r.errs[0])
			}
			if got := r.violations()[string(udpwire.RuleTypeUnknown)]; got != tc.violations {
				t.Errorf("%s violations %d, want %d (%v)", udpwire.RuleTypeUnknown, got, tc.violations, r.violations())
			}
		})
	}
	_, err := scenario.Parse("a.yaml", []byte("protocol: udp-lobby\nload: {clients: 1, duration: 1s}\nflows:\n  - steps:\n      - send: {raw: \"00\", allow: [U-TYPE-UNKNOWM]}\n"))
	if err == nil || !strings.Contains(err.Error(), `a.yaml:5:`) || !strings.Contains(err.Error(), `did you mean "U-TYPE-UNKNOWN"`) {
		t.Errorf("an unknown allowed rule: %v", err)
	}
}

// TestGarbageAnsweredAlike: malformed-mix's garbage flow and its script
// (the same datagrams, TestBundledScripted) against a lobby that answers
// every datagram with LOBBY_JOIN_FAILED echoing whatever its bytes 2-3
// hold, a sequence id read from garbage: both count the same malformed
// packets sent and answered by kind, the same violations, and the
// script's session does not fail on a reply that echoes no id it sent
// (it is blamed on the malformed send just before, as the step does);
// also when the lobby sends every reply twice (a packet answered counts
// once).
func TestGarbageAnsweredAlike(t *testing.T) {
	for _, copies := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d copies", copies), func(t *testing.T) { garbageAnsweredAlike(t, copies) })
	}
}

func garbageAnsweredAlike(t *testing.T, copies int) {
	echo := newCopyingResponder(t, copies, func(b []byte) []byte {
		if len(b) < 4 {
			return nil
		}
		h := udpwire.Header{PacketType: udpwire.ServerToClient, Type: udpwire.LobbyJoinFailed, Seq: uint16(b[2])<<8 | uint16(b[3])}
		if b[0] == 1 && b[1] == byte(udpwire.LobbyListRooms) && len(b) == 12 {
			out, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, h.Seq, nil)
			return out // a good request (or one with a bad CRC: not checked) gets its list
		}
		return udpwire.AppendRaw(nil, udpwire.ProfileSpec, h, nil)
	})
	var pair *bundled.Pair
	for _, p := range bundled.Pairs(t, udpwire.ProtocolName) {
		if p.Key == "malformed-mix/garbage" {
			pair = &p
		}
	}
	if pair == nil {
		t.Fatal("no malformed-mix/garbage pair")
	}
	play := func(p *scenario.Plan) (map[string][2]int64, int64) {
		r := runSessions(t, p, echo, 1, simclient.Options{Tick: time.Millisecond})
		if r.errs[0] != nil {
			t.Fatalf("%s: %v", p.Name, r.errs[0])
		}
		by := map[string][2]int64{}
		for _, m := range r.run.Malformed {
			by[m.Kind] = [2]int64{m.Sent, m.UnexpectedReplies}
		}
		return by, r.violations()[RuleUMalformedAns]
	}
	a, av := play(pair.BuiltIn)
	b, bv := play(pair.Scripted)
	if !maps.Equal(a, b) || av != bv || av == 0 {
		t.Errorf("built-in: %v, %d %s; scripted: %v, %d", a, av, RuleUMalformedAns, b, bv)
	}
}

// TestScriptOtherPort: a lobby that answers through a second socket, as
// lobbies in the wild do: a script's expect takes the reply as a built-in
// step does (a U-REPLY-SOURCE, the request answered), not as a stray
// datagram and a timeout, also when the send and the expect are in one
// block (the id is the client's from the send on, not from the step's
// end), and under on_violation: fail_step (a script applies it to no
// rule); a datagram from that port echoing no id the client used is
// stray, not charged to the lobby.
func TestScriptOtherPort(t *testing.T) {
	const steps = `      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`
	const block = `      - repeat: {count: 1}
        steps: [{send: LOBBY_LIST_ROOMS}, {expect: LOBBY_ROOM_LIST}]
`
	for _, tc := range []struct {
		name, flow, extra string
		seqOff            uint16 // added to the request's id in the reply
		ok, stray         int64
		violations        int64
	}{
		{"its own id", steps, "", 0, 1, 0, 1},
		{"its own id, in a block", block, "", 0, 1, 0, 1},
		{"its own id, on_violation fail_step", steps, "on_violation: fail_step", 0, 1, 0, 1},
		{"an id never used", steps, "", 0x4000, 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			out, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { in.Close(); out.Close() })
			go func() {
				buf := make([]byte, 2048)
				for {
					n, from, err := in.ReadFromUDPAddrPort(buf)
					if err != nil {
						return
					}
					if n >= 4 {
						seq := uint16(buf[2])<<8 | uint16(buf[3]) + tc.seqOff
						reply, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, seq, nil)
						out.WriteToUDPAddrPort(reply, from)
					}
				}
			}()
			// 2 s: the reply must be read within the wait, on a busy machine too.
			p := plan(t, "header_profile: spec\ndefaults: {timeout: 2s}\n"+tc.extra, "  - steps:\n"+tc.flow)
			r := runSessions(t, p, in.LocalAddr().(*net.UDPAddr).AddrPort(), 1, simclient.Options{})
			if got := r.run.Totals.Successes; got != tc.ok {
				t.Errorf("answered %d, want %d (session: %v)", got, tc.ok, r.errs[0])
			}
			if r.stray != tc.stray || r.violations()[RuleUReplySource] != tc.violations {
				t.Errorf("stray %d, %s %d; want %d, %d", r.stray, RuleUReplySource, r.violations()[RuleUReplySource], tc.stray, tc.violations)
			}
		})
	}
}
