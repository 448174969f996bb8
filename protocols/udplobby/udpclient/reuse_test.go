package udpclient

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestReuse: a session that completed its flow hands its socket to the
// next one (same local address, sequence ids going on) unless the flow
// disconnected; simclient.Renew then opens a new socket.
func TestReuse(t *testing.T) {
	tests := []struct {
		name  string
		steps string
		reuse bool
	}{
		{"a poller keeps its socket", "[list_rooms, {think: 1ms}, list_rooms]", true},
		{"a flow that disconnects does not", "[list_rooms, disconnect]", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec)
			p := plan(t, "", "  - name: a\n    steps: "+tc.steps+"\n")
			sh, err := simclient.NewShared(p, f.addr(), metrics.NewCollector(time.Now()), simclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := &keptClient{t: t, sh: sh}
			defer c.close()
			var addrs []netip.AddrPort
			for range 3 {
				addrs = append(addrs, c.next(ctx).LocalAddr())
			}
			same := addrs[0] == addrs[1] && addrs[1] == addrs[2]
			if same != tc.reuse {
				t.Errorf("local addresses %v: reused %v, want %v", addrs, same, tc.reuse)
			}
			seqs := f.seqsOf(udpwire.LobbyListRooms)
			distinct := map[uint16]bool{}
			for _, q := range seqs {
				distinct[q] = true
			}
			if tc.reuse && (len(seqs) != 6 || len(distinct) != 6) {
				t.Errorf("list sequence ids %v: a reused socket must not repeat them", seqs)
			}
		})
	}
}

// TestReuseLateDuplicate: a lobby that sends every reply twice breaks
// udp-lobby.md §1 (exactly one datagram). The copy that arrives after its
// session completed is read by the next session on the kept socket, which
// still knows it for a second reply to a request sent once: U-REPLY-DUP,
// once per copy, not a stale answer (nor U-SEQ-ECHO: the count of ids
// used goes on with the ids).
func TestReuseLateDuplicate(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) { f.dup = true })
	p := plan(t, "", "  - name: a\n    steps: [list_rooms]\n")
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, f.addr(), c, simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc := &keptClient{t: t, sh: sh}
	var stale int64
	for range 4 {
		stale += kc.next(ctx).stale
	}
	kc.close()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Sessions 2-4 each read the copy of the previous session's reply
	// (the last copy is never read), and perhaps their own's.
	if len(run.Violations) != 1 || run.Violations[0].Rule != RuleUReplyDup || run.Violations[0].Count < 3 {
		t.Errorf("violations %+v, want U-REPLY-DUP for at least 3 copies", run.Violations)
	}
	if stale != 0 {
		t.Errorf("%d copies taken as stale", stale)
	}
}

// TestReuseZeroAlloc keeps a closed-model client's iteration on its kept
// socket (simclient.Renew, then Run of a 1-step list flow) free of
// allocations: per-iteration work is paid on every request of a 1-step
// poller.
//
// The same in precise mode (run --precise), whose non-blocking reads must
// not allocate either.
func TestReuseZeroAlloc(t *testing.T) {
	for _, precise := range []bool{false, true} {
		t.Run(fmt.Sprintf("precise=%v", precise), func(t *testing.T) { testReuseZeroAlloc(t, precise) })
	}
}

func testReuseZeroAlloc(t *testing.T, precise bool) {
	e := newEchoServer(t, 1) // allocates nothing: the count is the client's
	p := plan(t, "", "  - name: a\n    steps: [list_rooms]\n")
	// One recorder: the first use of a key in each recorder allocates.
	sh, err := simclient.NewShared(p, e.addr(), metrics.NewCollector(time.Now()), simclient.Options{Recorders: 1, Precise: precise})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	ctx := context.Background()
	c := &keptClient{t: t, sh: sh}
	defer c.close()
	c.next(ctx) // the socket, the session and the metrics keys' first use allocate
	if n := memfig.Allocs(100, func() { c.next(ctx) }); n != 0 {
		t.Errorf("%.1f allocations per iteration on a kept socket, want 0", n)
	}
}

// keptClient plays flow 0 of sh's plan session after session as a
// closed-model client does: each on the previous one's socket when it can
// (simclient.Renew), under client ids 0, 1, 2 …
type keptClient struct {
	t    testing.TB
	sh   *simclient.Shared
	prev simclient.Session
	id   int
}

// next makes and runs the client's next session, which must complete.
func (c *keptClient) next(ctx context.Context) *session {
	c.t.Helper()
	s, err := simclient.Renew(New, c.sh, c.prev, c.id, &c.sh.Plan.Flows[0], clientSrc)
	if err != nil {
		c.t.Fatal(err)
	}
	c.prev = s
	if err := s.Run(ctx, time.Now()); err != nil {
		c.t.Fatalf("session %d: %v", c.id, err)
	}
	c.id++
	return s.(*session)
}

// close closes the last session.
func (c *keptClient) close() {
	if c.prev != nil {
		c.prev.Close()
		c.prev = nil
	}
}

// TestReuseAfterClose: a closed session is not reused.
func TestReuseAfterClose(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", "  - name: a\n    steps: [list_rooms]\n")
	sh, err := simclient.NewShared(p, f.addr(), metrics.NewCollector(time.Now()), simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	s, err := New(sh, 0, &p.Flows[0], clientSrc)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, ok := s.(simclient.Reusable).Reuse(1, &p.Flows[0]); ok {
		t.Error("a closed session was reused")
	}
	var other scenario.Flow
	s2, _ := New(sh, 2, &p.Flows[0], clientSrc)
	defer s2.Close()
	if _, ok := s2.(simclient.Reusable).Reuse(3, &other); ok {
		t.Error("reused for a flow that is not the plan's")
	}
}

// TestIdleReleasesBuffer: a session waiting out a think time holds no
// receive buffer, and takes one again for the next reply.
func TestIdleReleasesBuffer(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", "  - name: a\n    steps: [list_rooms, {think: 1ms}, list_rooms, {think: 1ms}]\n")
	s, _ := oneSession(t, p, f.addr(), simclient.Options{})
	if err := s.Run(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	tr := s.(*session).tr
	if n := tr.rx.Held(); n != 0 {
		t.Errorf("after a think time the session holds a %d-byte receive buffer", n)
	}
	if n := f.count(udpwire.LobbyListRooms); n != 2 {
		t.Errorf("server saw %d lists, want 2", n)
	}
}

// TestTransportWatch: a socket kept across sessions is cancelled by the
// context it watches last, once; close ends the watch.
func TestTransportWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sh := &simclient.Shared{}
		ctx, cancel := context.WithCancel(context.Background())
		tr := &transport{}
		tr.watch(ctx, sh)
		tr.watch(ctx, sh) // a reused socket's next session: already watched
		cancel()
		synctest.Wait()
		if !tr.cancelled.Load() {
			t.Error("the watched context ended but the transport was not cancelled")
		}

		ctxA, cancelA := context.WithCancel(context.Background())
		ctxB, cancelB := context.WithCancel(context.Background())
		tr2 := &transport{}
		tr2.watch(ctxA, sh)
		tr2.watch(ctxB, sh)
		cancelA()
		synctest.Wait()
		if tr2.cancelled.Load() {
			t.Error("cancelled by a context it no longer watches")
		}
		cancelB()
		synctest.Wait()
		if !tr2.cancelled.Load() {
			t.Error("not cancelled by the context it watches")
		}

		ctxC, cancelC := context.WithCancel(context.Background())
		tr3 := &transport{}
		tr3.watch(ctxC, sh)
		tr3.close()
		cancelC()
		synctest.Wait()
		if tr3.cancelled.Load() {
			t.Error("a closed transport was cancelled by the context it watched")
		}
	})
}

// TestReuseLateReply replays the soak's U-SEQ-ECHO deterministically: a
// lobby reply to the previous session's request (the network duplicated
// it, or the server's replay cache answered a retry again) waits in the
// kept socket and is read by the next session, whose request has the
// next id. After a retry it is stale, not a violation; a second reply to
// a request sent once is U-REPLY-DUP (udp-lobby.md §1); a reply to an id
// the socket never used is U-SEQ-ECHO, and its detail names the ids really used
// (before the count went on with the ids, the soak's reused sockets said
// "LOBBY_ROOM_LIST seq 1: this client sent sequence ids 1-1" about a
// socket that had sent 1 and 2). The late datagram is injected from the
// lobby's own port, not left to timing.
func TestReuseLateReply(t *testing.T) {
	tests := []struct {
		name      string
		seq, sent int    // ids the socket used before: sent of them, ending at seq (0: as session 1 left them)
		late      uint16 // the injected reply's id
		retried   bool   // session 1's request counts as sent more than once
		rule      string // the violation ("" for a stale reply)
		detail    string // its detail
	}{
		{name: "late reply to session 1's retried request", late: 1, retried: true},
		{name: "second reply to session 1's request, sent once", late: 1, rule: RuleUReplyDup,
			detail: "LOBBY_ROOM_LIST seq 1: a second reply to the request of that sequence id, sent once and already answered (udp-lobby.md §1: exactly one datagram)"},
		{name: "reply to an id never sent", late: 9, rule: RuleUSeqEcho, detail: "LOBBY_ROOM_LIST seq 9: this client sent sequence ids 1-2"},
		{name: "id 0 is never sent", late: 0, rule: RuleUSeqEcho, detail: "LOBBY_ROOM_LIST seq 0: this client sent sequence ids 1-2"},
		{name: "late reply across the wrap", seq: 3, sent: 10, late: 65531},
		{name: "unknown id across the wrap", seq: 3, sent: 10, late: 100, rule: RuleUSeqEcho, detail: "LOBBY_ROOM_LIST seq 100: this client sent sequence ids 65530-65535 and 0-4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec)
			p := plan(t, "", "  - name: a\n    steps: [list_rooms]\n")
			c := metrics.NewCollector(time.Now())
			sh, err := simclient.NewShared(p, f.addr(), c, simclient.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			kc := &keptClient{t: t, sh: sh}
			defer kc.close()
			s1 := kc.next(ctx)
			if tc.sent != 0 {
				s1.seq, s1.sent = uint16(tc.seq), int32(tc.sent)
			}
			if tc.retried {
				s1.answered.once = false
			}
			late := f.defaultLobby(&udpwire.Message{Header: udpwire.Header{Type: udpwire.LobbyListRooms, Seq: tc.late}})
			if _, err := f.conn.WriteToUDPAddrPort(late, s1.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			s2 := kc.next(ctx) // reads the late reply first: it is queued before its own
			if s2 != s1 || s2.LocalAddr() != s1.LocalAddr() {
				t.Fatal("the socket was not kept: the test did not exercise reuse")
			}
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if tc.rule == "" {
				if len(run.Violations) != 0 || s2.stale != 1 {
					t.Errorf("violations %+v, stale %d: a late reply to an id the socket used is stale (1), not a violation", run.Violations, s2.stale)
				}
				return
			}
			if len(run.Violations) != 1 || run.Violations[0].Rule != tc.rule || run.Violations[0].Count != 1 {
				t.Fatalf("violations %+v, want one %s", run.Violations, tc.rule)
			}
			if got := run.Violations[0].Samples[0].Detail; got != tc.detail {
				t.Errorf("detail %q, want %q", got, tc.detail)
			}
		})
	}
}

// TestLargeRoomList: a room list of 1,000 rooms (about 11 KB, more than
// the small buffer a client keeps) is read whole the first time: no
// request is sent again and none is counted as a retry.
func TestLargeRoomList(t *testing.T) {
	rooms := make([]udpwire.Room, 1000)
	for i := range rooms {
		rooms[i] = udpwire.Room{ID: uint32(i + 1), MaxPlayers: 4, Port: uint16(20000 + i), State: udpwire.Waiting}
	}
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) {
		f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
			if m.Type != udpwire.LobbyListRooms {
				return def
			}
			b, err := udpwire.AppendRoomList(nil, f.p, m.Seq, rooms)
			if err != nil {
				f.t.Error(err)
			}
			if len(b) <= rxbuf.Small {
				f.t.Errorf("a list of %d bytes fits the small buffer: the test proves nothing", len(b))
			}
			return b
		}
	})
	p := plan(t, "defaults: {timeout: 5s, retries: 3}", "  - steps: [list_rooms, {think: 1ms}, list_rooms, {think: 1ms}]\n")
	r := runSessions(t, p, f.addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	st := r.step(t, "list_rooms")
	if st.Successes != 2 || st.Retries != 0 || st.Failures != 0 {
		t.Errorf("list_rooms: %d ok, %d retries, %d failed; want 2, 0, 0", st.Successes, st.Retries, st.Failures)
	}
	if n := f.count(udpwire.LobbyListRooms); n != 2 {
		t.Errorf("server saw %d lists, want 2 (one per step)", n)
	}
}

// TestUseIDs: the count of sequence ids used stops at 1<<16, all of them,
// so that knownSeq knows every id however long the socket lived.
func TestUseIDs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		from, n    int32
		want       int32
		known, not uint16 // an id knownSeq must know, and one it must not (0: none)
	}{
		{name: "first", from: 0, n: 1, want: 1, known: 5, not: 4},
		{name: "some", from: 10, n: 5, want: 15, known: 0, not: 65525},
		{name: "to the last id", from: 65530, n: 6, want: 1 << 16, known: 6},
		{name: "past it", from: 65530, n: 100, want: 1 << 16, known: 7},
		{name: "long after", from: 1 << 16, n: 1 << 20, want: 1 << 16, known: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{seq: 5, sent: tc.from}
			s.useIDs(int(tc.n))
			if s.sent != tc.want {
				t.Fatalf("sent %d, want %d", s.sent, tc.want)
			}
			if !s.knownSeq(tc.known) {
				t.Errorf("id %d not known after %d used", tc.known, s.sent)
			}
			if tc.not != 0 && s.knownSeq(tc.not) {
				t.Errorf("id %d known after %d used ending at %d", tc.not, s.sent, s.seq)
			}
		})
	}
}
