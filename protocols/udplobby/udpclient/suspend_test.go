package udpclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestSuspendResume: with Options.Suspend, a session gives up its
// goroutine in every pause of at least simclient.SuspendMin (Run or
// Resume returns ErrSuspended; the pauses here are 20 times that, so a
// busy machine does not shorten them below it) and goes on where it
// paused when resumed:
// a think step continues with the next step, a ping series with its next
// ping, on the series' own schedule (the pauses end exactly interval
// apart). The flow then completes as it would without suspending.
func TestSuspendResume(t *testing.T) {
	tests := []struct {
		name, flow string
		// wantSusp is the number of suspensions; spacing, when set, the
		// exact distance between successive pause ends.
		wantSusp int
		spacing  time.Duration
		counts   map[udpwire.MsgType]int
	}{
		{"think steps", `
  - name: poller
    steps: [list_rooms, {think: 200ms}, list_rooms, {think: 200ms}, list_rooms]
`, 2, 0, map[udpwire.MsgType]int{udpwire.LobbyListRooms: 3}},
		{"ping series", `
  - name: pinger
    steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - ping: {count: 4, interval: 200ms}
      - list_rooms
`, 3, 200 * time.Millisecond, map[udpwire.MsgType]int{udpwire.ClientPing: 4, udpwire.LobbyListRooms: 1}},
		{"short pauses do not suspend", `
  - name: pinger
    steps: [list_rooms, {think: 1ms}, list_rooms]
`, 0, 0, map[udpwire.MsgType]int{udpwire.LobbyListRooms: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec)
			p := plan(t, "", tc.flow)
			s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true})
			r := s.(simclient.Resumer)
			ctx := context.Background()
			var ends []time.Time
			err := s.Run(ctx, time.Now())
			for err == simclient.ErrSuspended && len(ends) < 10 {
				ends = append(ends, r.SuspendedUntil())
				err = r.Resume(ctx)
			}
			if err != nil {
				t.Fatalf("the flow ended with %v after %d suspensions", err, len(ends))
			}
			if len(ends) != tc.wantSusp {
				t.Errorf("%d suspensions, want %d", len(ends), tc.wantSusp)
			}
			for k := 1; tc.spacing > 0 && k < len(ends); k++ {
				if d := ends[k].Sub(ends[k-1]); d != tc.spacing {
					t.Errorf("pause %d ends %v after pause %d, want %v: the series' schedule moved", k, d, k-1, tc.spacing)
				}
			}
			for typ, n := range tc.counts {
				if got := f.count(typ); got != n {
					t.Errorf("server saw %d %v, want %d", got, typ, n)
				}
			}
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if run.Totals.Failures != 0 || run.Totals.Violations != 0 {
				t.Errorf("failures %d, violations %d, want none", run.Totals.Failures, run.Totals.Violations)
			}
		})
	}
}

// TestSuspendedStop: a session suspended in a pause when the stop signal
// fires ends, when resumed, as a pause the stop ends does (ErrStopped; the
// pause cut, not failed), without sending anything more.
func TestSuspendedStop(t *testing.T) {
	f := newFakeLobby(t, udpwire.ProfileSpec)
	p := plan(t, "", `
  - name: idler
    steps: [list_rooms, {think: 1h}, list_rooms]
`)
	s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop, fire := context.WithCancel(ctx)
	rctx := simclient.WithStop(ctx, stop)
	if err := s.Run(rctx, time.Now()); err != simclient.ErrSuspended {
		t.Fatalf("Run = %v, want ErrSuspended", err)
	}
	fire()
	if err := s.(simclient.Resumer).Resume(rctx); !errors.Is(err, simclient.ErrStopped) {
		t.Fatalf("Resume after the stop = %v, want ErrStopped", err)
	}
	if n := f.count(udpwire.LobbyListRooms); n != 1 {
		t.Errorf("server saw %d lists, want 1", n)
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if run.Totals.Failures != 0 {
		t.Errorf("%d failures, want 0: a pause the stop ends is cut", run.Totals.Failures)
	}
}

// TestSuspendWaits: with Options.SuspendWaits, a request whose reply is
// not there yet suspends the session (ErrSuspended; SuspendedOn names
// the socket, SuspendedUntil the request's deadline) instead of parking.
// Resume goes on waiting for the same request: a reply that came in the
// meantime completes it, sent once; a deadline that passed sends it again
// with the same sequence id, under the step's retries, and the request
// fails only once they are spent. Without SuspendWaits the session parks.
// Only a session that parked made its socket a sweeper's waker.
func TestSuspendWaits(t *testing.T) {
	tests := []suspendWaitsCase{
		{"reply while suspended", simclient.Options{Suspend: true, SuspendWaits: true}, true, 1, 1, false, false},
		// Three: the first deadline, the retry interval, the retry's
		// deadline.
		{"deadlines while suspended", simclient.Options{Suspend: true, SuspendWaits: true}, false, 3, 2, true, false},
		{"parks without SuspendWaits", simclient.Options{Suspend: true}, false, 0, 2, true, true},
	}
	for _, mode := range testFlowsModes(t) {
		for _, tc := range tests {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) { tc.play(t, mode) })
		}
	}
}

// suspendWaitsCase is a row of TestSuspendWaits.
type suspendWaitsCase struct {
	name  string
	opt   simclient.Options
	reply bool // the test sends the held reply once suspended
	// wantSusp is the number of suspensions; wantSends, the lists the
	// server saw; wantErr, that the step failed (timeout).
	wantSusp, wantSends int
	wantErr             bool
	// wantWaker: the session's transport made its waker (a read parked).
	wantWaker bool
}

// play plays the row with its session on a socket or a virtual flow
// (mode): a socket's wait suspends on its descriptor, a flow's on the
// flow (a Notifier), never both.
func (tc suspendWaitsCase) play(t *testing.T, mode scenario.FlowsMode) {
	held := make(chan []byte, 4)
	f := newFakeLobby(t, udpwire.ProfileSpec, func(f *fakeLobby) {
		f.lobbyHook = func(_ *fakeLobby, _ *udpwire.Message, def []byte) []byte {
			held <- append([]byte(nil), def...)
			return nil // the test answers, or nobody does
		}
	})
	p := plan(t, "flows_mode: "+string(mode), `
  - name: lister
    steps: [{list_rooms: {timeout: 200ms, retries: 1, retry_interval: 100ms}}]
`)
	s, c := oneSession(t, p, f.addr(), tc.opt)
	r := s.(simclient.Resumer)
	ctx := context.Background()
	var susp int
	err := s.Run(ctx, time.Now())
	for err == simclient.ErrSuspended && susp < 10 {
		susp++
		fd, on := r.SuspendedOn()
		if virtual := mode == scenario.FlowsVirtual; (fd >= 0) == virtual || (on != nil) != virtual {
			t.Fatalf("suspended on fd %d, notifier %v: want the %s", fd, on, map[bool]string{false: "socket", true: "flow"}[virtual])
		}
		if tc.reply {
			reply := <-held
			if _, err := f.conn.WriteToUDPAddrPort(reply, s.(*session).LocalAddr()); err != nil {
				t.Fatal(err)
			}
			// As the engine would: resume once the reply is there.
			waitReady(t, fd, on, time.Now().Add(10*time.Second))
		} else {
			time.Sleep(time.Until(r.SuspendedUntil()))
		}
		err = r.Resume(ctx)
	}
	if susp != tc.wantSusp {
		t.Errorf("%d suspensions, want %d", susp, tc.wantSusp)
	}
	if made := s.(*session).tr.waker.Load() != nil; made != tc.wantWaker {
		t.Errorf("the transport made a waker: %v, want %v (only a read that parks needs one)", made, tc.wantWaker)
	}
	if (err != nil) != tc.wantErr {
		t.Fatalf("the flow ended with %v, want error %v", err, tc.wantErr)
	}
	if n := f.count(udpwire.LobbyListRooms); n != tc.wantSends {
		t.Errorf("server saw %d lists, want %d", n, tc.wantSends)
	}
	if seqs := f.seqsOf(udpwire.LobbyListRooms); len(seqs) == 2 && seqs[0] != seqs[1] {
		t.Errorf("the retry was sent with seq %d, the first send with %d: want the same", seqs[1], seqs[0])
	}
	tc.checkTotals(t, c, err)
}

// checkTotals checks the run's failures, and the step's error, against
// the row's.
func (tc suspendWaitsCase) checkTotals(t *testing.T, c *metrics.Collector, err error) {
	t.Helper()
	run, err2 := c.Snapshot()
	if err2 != nil {
		t.Fatal(err2)
	}
	wantFail := int64(0)
	if tc.wantErr {
		wantFail = 1
	}
	if run.Totals.Failures != wantFail {
		t.Errorf("failures %d, want %d", run.Totals.Failures, wantFail)
	}
	if tc.wantErr {
		var se *simclient.StepError
		if !errors.As(err, &se) || se.Reason != result.ReasonTimeout {
			t.Errorf("the step failed with %v, want a timeout", err)
		}
	}
}

// TestSuspendWaitsFlow: a whole flow whose every reply comes late (held
// by the fake lobby until its client suspended) completes as it does
// parked, each request sent once, when its session suspends in its waits
// for replies as well as in its pauses: each step that waited runs again
// on Resume and goes on with its request in flight (a ping series at its
// ping, a script at its expect, in its repeat's round), not from its
// start. The test resumes a wait once its socket is readable, as the
// engine's poller does, and a pause at its end.
func TestSuspendWaitsFlow(t *testing.T) {
	for _, tc := range []struct {
		name, flow string
		pauses     int
	}{
		{"built-in", `
  - name: pinger
    steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - ping: {count: 3, interval: 100ms}
      - list_rooms
`, 2},
		{"scripted", `
  - name: pinger
    steps:
` + joinScript + `      - repeat: {count: 3}
        steps:
          - if: "room > 0"
            then:
              - send: CLIENT_PING
              - expect: SERVER_PONG
          - think: 100ms
      - send: LOBBY_LIST_ROOMS
      - expect: LOBBY_ROOM_LIST
`, 3},
	} {
		for _, mode := range testFlowsModes(t) {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				var held heldReplies
				f := newFakeLobby(t, udpwire.ProfileSpec, held.hold)
				p := plan(t, "flows_mode: "+string(mode), tc.flow)
				s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true, SuspendWaits: true})
				waits, pauses, err := playSuspending(t, s, func() { held.release(t, s.(*session).LocalAddr()) })
				if err != nil {
					t.Fatalf("the flow ended with %v after %d waits and %d pauses suspended", err, waits, pauses)
				}
				if waits == 0 || pauses != tc.pauses {
					t.Errorf("%d waits and %d pauses suspended, want some waits and %d pauses", waits, pauses, tc.pauses)
				}
				for typ, n := range map[udpwire.MsgType]int{udpwire.LobbyCreateRoom: 1, udpwire.LobbyJoinRoom: 1, udpwire.ClientHello: 1,
					udpwire.ClientJoinRequest: 1, udpwire.ClientPing: 3, udpwire.LobbyListRooms: 1} {
					if got := f.count(typ); got != n {
						t.Errorf("server saw %d %v, want %d", got, typ, n)
					}
				}
				run, err := c.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if run.Totals.Failures != 0 || run.Totals.Violations != 0 || run.Totals.Retries != 0 {
					t.Errorf("failures %d, violations %d, retries %d, want none", run.Totals.Failures, run.Totals.Violations, run.Totals.Retries)
				}
				for _, st := range run.Steps {
					if st.Successes == 0 {
						t.Errorf("step %s recorded no success", st.Name)
					}
				}
			})
		}
	}
}

// TestRetryScheduleIsPerRequest: a reply that comes after its request's
// timeout, while its re-send waits for the retry interval, completes the
// request, and the re-send it had scheduled does not carry over to the
// next request (the wait's state lives in the session: replyWait), which
// waits its own timeout and is not re-sent. The replies are held by the
// fake lobby and released by the test, and the session resumed at chosen
// moments, so the order of events does not depend on the machine's speed.
func TestRetryScheduleIsPerRequest(t *testing.T) {
	var held heldReplies
	f := newFakeLobby(t, udpwire.ProfileSpec, held.hold)
	p := plan(t, "", `
  - name: lister
    steps:
      - {list_rooms: {timeout: 30ms, retries: 1, retry_interval: 200ms}}
      - {list_rooms: {timeout: 5s, retries: 1, retry_interval: 200ms}}
`)
	s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true, SuspendWaits: true})
	r := s.(simclient.Resumer)
	ctx := context.Background()
	suspended := func(err error, what string) time.Time {
		t.Helper()
		if fd, _ := r.SuspendedOn(); err != simclient.ErrSuspended || fd < 0 {
			t.Fatalf("%s: %v, suspended on fd %d: want a wait on the socket", what, err, fd)
		}
		return r.SuspendedUntil()
	}
	readable := func() {
		t.Helper()
		held.release(t, s.(*session).LocalAddr())
		fd, _ := r.SuspendedOn()
		if n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000); n != 1 || err != nil {
			t.Fatalf("the released reply did not make the socket readable: %d, %v", n, err)
		}
	}
	// List 1 waits out its 30 ms timeout, then for its retry time.
	time.Sleep(time.Until(suspended(s.Run(ctx, time.Now()), "list 1 sent")))
	retryAt := suspended(r.Resume(ctx), "list 1 timed out")
	// Its reply comes during the retry interval: list 1 is done, and list
	// 2 is sent and waits for its reply.
	readable()
	suspended(r.Resume(ctx), "list 2 sent")
	// At list 1's retry time list 2 still waits: nothing is sent again.
	time.Sleep(time.Until(retryAt))
	suspended(r.Resume(ctx), "list 2 at list 1's retry time")
	readable()
	if err := r.Resume(ctx); err != nil {
		t.Fatalf("the flow ended with %v", err)
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if n := f.count(udpwire.LobbyListRooms); n != 2 || run.Totals.Retries != 0 || run.Totals.Failures != 0 {
		t.Errorf("server saw %d lists, %d retries, %d failures: want 2, 0, 0", n, run.Totals.Retries, run.Totals.Failures)
	}
}

// heldReplies holds every reply of a fake lobby (hold: lobby and
// instances alike) until release sends them to the client, from the
// socket that would have sent them: the test decides when replies come.
type heldReplies struct {
	mu sync.Mutex
	q  []heldReply
}

type heldReply struct {
	from *net.UDPConn
	b    []byte
}

func (h *heldReplies) hold(f *fakeLobby) {
	f.lobbyHook = func(f *fakeLobby, _ *udpwire.Message, def []byte) []byte {
		h.add(f.conn, def)
		return nil
	}
	f.instHook = func(_ *fakeLobby, r *fakeRoom, _ *udpwire.Message, def []byte) []byte {
		h.add(r.out, def)
		return nil
	}
}

func (h *heldReplies) add(from *net.UDPConn, b []byte) {
	if b == nil {
		return
	}
	h.mu.Lock()
	h.q = append(h.q, heldReply{from, append([]byte(nil), b...)})
	h.mu.Unlock()
}

// release sends the held replies to the client at to, waiting (up to 10 s)
// for at least one: the fake lobby answers on its own goroutine.
func (h *heldReplies) release(t *testing.T, to netip.AddrPort) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		h.mu.Lock()
		q := h.q
		h.q = nil
		h.mu.Unlock()
		for _, r := range q {
			if _, err := r.from.WriteToUDPAddrPort(r.b, to); err != nil {
				t.Fatal(err)
			}
		}
		if len(q) > 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatal("no reply to release: the fake lobby got no request")
		}
	}
}

// playSuspending runs session s to its end as the engine would: a wait it
// suspends in is resumed once its socket is readable or its deadline
// passed (release, when set, is called first: it sends held replies), a
// pause at its end (at most 100 suspensions). It returns the waits and
// pauses it suspended in, and how the flow ended.
func playSuspending(t *testing.T, s simclient.Session, release func()) (waits, pauses int, err error) {
	t.Helper()
	r := s.(simclient.Resumer)
	ctx := context.Background()
	err = s.Run(ctx, time.Now())
	for err == simclient.ErrSuspended && waits+pauses < 100 {
		if fd, on := r.SuspendedOn(); fd >= 0 || on != nil {
			waits++
			if release != nil {
				release()
			}
			waitReady(t, fd, on, r.SuspendedUntil())
		} else {
			pauses++
			time.Sleep(time.Until(r.SuspendedUntil()))
		}
		err = r.Resume(ctx)
	}
	return waits, pauses, err
}

// waitReady waits as the engine does for a suspended wait to end: until
// socket fd (≥ 0) is readable or on is ready, at most until until.
func waitReady(t *testing.T, fd int, on simclient.Notifier, until time.Time) {
	t.Helper()
	if on != nil {
		ready := make(chan struct{})
		on.OnReady(func() { close(ready) })
		select {
		case <-ready:
		case <-time.After(time.Until(until)):
		}
		return
	}
	ms := max(int(time.Until(until)/time.Millisecond), 0)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Poll(pfd, ms); err != nil && err != unix.EINTR {
		t.Fatal(err)
	}
}
