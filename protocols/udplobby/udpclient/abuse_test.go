package udpclient

import (
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
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
// frame, even garbage, each malformed packet's reply is a violation and an
// unexpected reply of its kind, sent by the built-in malformed step or by
// a script's malformed send alike (for which a reply is no answer: the
// silence after them holds).
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
		})
	}
}

// newRawResponder answers every datagram with reply(datagram), if not nil.
func newRawResponder(t testing.TB, reply func([]byte) []byte) netip.AddrPort {
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
				e.conn.WriteToUDPAddrPort(out, from)
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
	r := runSessions(t, p, addr, 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if len(r.run.RateLimits) != 1 {
		t.Fatalf("rate limit findings %+v", r.run.RateLimits)
	}
	fd := r.run.RateLimits[0]
	if fd.Source != "rate_probe" || fd.Sent != 110 || fd.Limited == 0 || fd.Accepted+fd.Limited != fd.Sent {
		t.Errorf("finding %+v", fd)
	}
	if fd.ObservedLimitPerSec < 20 || fd.ObservedLimitPerSec > 80 {
		t.Errorf("observed limit %.1f/s, want about 50/s (%s)", fd.ObservedLimitPerSec, fd.Note)
	}
}

func TestRateProbeNoLimit(t *testing.T) {
	e := newEchoServer(t, 1)
	p := plan(t, "", `  - steps:
      - rate_probe: {from: 10/s, to: 100/s, over: 500ms, timeout: 200ms}
`)
	r := runSessions(t, p, e.addr(), 1, simclient.Options{Tick: time.Millisecond})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	fd := r.run.RateLimits[0]
	if fd.ObservedLimitPerSec != 0 || fd.Limited != 0 || fd.Sent != 27 {
		t.Errorf("finding %+v, want no limit and 27 sent", fd)
	}
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
