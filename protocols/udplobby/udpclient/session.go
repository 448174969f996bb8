package udpclient

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/impair"
	"github.com/lobbybench/lobbybench/internal/instant"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// runKey keys the per-run state in simclient.Shared.Value.
type runKey struct{}

// runState is what all UDP sessions of one run share.
type runState struct {
	auto    bool
	profile atomic.Int32 // udplobby.Profile, or -1 while "auto" has not guessed it
	keys    [256]metrics.Key
	ports   scenario.PortRange
	lobby   netip.AddrPort // the target, every session's lobby
}

func getRun(sh *simclient.Shared) *runState {
	return sh.Value(runKey{}, func() any {
		o := OptionsOf(sh.Plan)
		rt := &runState{ports: o.InstancePorts, lobby: unmap(sh.Target)}
		switch o.HeaderProfile {
		case "rtype17":
			rt.profile.Store(int32(udpwire.ProfileRType17))
		case "auto":
			rt.auto = true
			rt.profile.Store(-1)
		default:
			rt.profile.Store(int32(udpwire.ProfileSpec))
		}
		for _, t := range []udpwire.MsgType{udpwire.LobbyListRooms, udpwire.LobbyCreateRoom, udpwire.LobbyJoinRoom,
			udpwire.ClientHello, udpwire.ClientJoinRequest, udpwire.ClientReady, udpwire.ClientPing,
			udpwire.ClientDisconnect, udpwire.ServerGameStart} {
			rt.keys[t] = sh.MessageKey(t.String())
		}
		return rt
	}).(*runState)
}

// session is one simulated UDP lobby client.
type session struct {
	simclient.Base
	rt *runState
	tr *transport
	// sentNS is the send stamp of the pending request's first datagram
	// (ns since the epoch), written by a virtual flow's flusher when the
	// send was queued (transport.sendQueued).
	sentNS atomic.Int64
	// series is where a ping series suspended in a pause goes on.
	series series

	inst netip.AddrPort // zero until a create or join returned a port

	profile udpwire.Profile
	known   bool // profile known (not auto, or guessed)
	seq     uint16
	sent    int32 // sequence ids used so far, up to 1<<16 (useIDs)
	obuf    []byte
	// lists are the room lists read, made at the first (most clients
	// never list rooms).
	lists *roomLists

	// pending request, valid while p.active, and the wait for its reply
	p  pending
	pw replyWait

	// game state
	roomID    uint32
	created   uint32
	createdAt instant.Instant
	lastTick  int
	// lastEvent is the instance's last event, to tell an exact repeat
	// under the impairment's duplication or reordering (not strictOrder);
	// nil until then, as most clients never need it.
	lastEvent *eventCopy

	stale    int64
	badReply error
	refusal  *reqFail
	// answered is the last lobby request that got its reply, kept across
	// Reuse: a second reply to it, when it was sent once, is
	// RuleUReplyDup.
	answered answeredReq

	// The flags last, together, where they take no padding (the session's
	// size class, TestClientSizes).
	// mayAwait: the current step can run again from its start to go on
	// with a request that suspended (request, simclient.Base.Await).
	// waitSuspended: the pending request's wait suspended the session
	// (request), which goes on with it at the step's next request call.
	mayAwait      bool
	waitSuspended bool
	instJoined    bool
	allReady      bool
	gameStarted   bool
	gameEnded     bool
	kicked        bool
	disconnect    bool
	strictOrder   bool
	// oneReply: a request sent once gets one datagram back, unless the
	// scenario's impairment duplicates requests or replies.
	oneReply bool
}

// roomLists are the last room list a session read and the one before it,
// for compareLists (session.lists).
type roomLists struct {
	rooms, prev []udpwire.Room
}

// rooms is the last room list read: none before the first.
func (s *session) rooms() []udpwire.Room {
	if s.lists == nil {
		return nil
	}
	return s.lists.rooms
}

// eventCopy is a copy of an instance's event of up to 32 bytes
// (session.lastEvent).
type eventCopy struct {
	b [32]byte
	n uint8
}

// useIDs counts n more sequence ids as used (session.sent): past 1<<16,
// every id has been.
func (s *session) useIDs(n int) { s.sent = int32(min(int(s.sent)+n, 1<<16)) }

// answeredReq is a lobby request that was answered: its sequence id, and
// whether it was sent once (a second reply to a retried request may
// answer the retry).
type answeredReq struct {
	seq   uint16
	once  bool
	valid bool
}

type pending struct {
	// in size order, its moments as 8-byte instants: 72 bytes (the
	// session's size class, TestClientSizes)
	to       netip.AddrPort
	intended instant.Instant
	sent     instant.Instant
	attempt  int
	roomID   uint32
	value    uint32
	seq      uint16
	active   bool
	typ      udpwire.MsgType
	inst     bool
}

// replyWait is the wait for the pending request's reply (request): the
// current deadline, and when the request is sent again (zero: not
// scheduled). It is kept in the session rather than on the stack, so that
// a request whose session suspended (session.waitSuspended:
// simclient.Base.Await) goes on when the step's next request call comes;
// and apart from pending, whose literals the steps build on their own
// frames (simclient.StackBudget).
type replyWait struct {
	deadline instant.Instant
	resendAt instant.Instant
	// replied is when the reply to the step's last request arrived
	// (zero: none yet in this step): the step's end (Base.FinishAt).
	replied instant.Instant
}

// New is the udp-lobby simclient.Factory.
func New(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
	s := &session{}
	if err := s.Begin(sh, id, flow); err != nil {
		return nil, err
	}
	tr := &transport{}
	if err := tr.openOn(sh, src); err != nil {
		return nil, simclient.OpenError(err)
	}
	sh.ReceiveStamps(tr.stamps)
	imp := sh.Plan.Impairment
	if !imp.IsZero() {
		r := sh.ImpairRand(id)
		tr.out = impair.New(impair.Config(imp.Out), r, 0)
		tr.in = impair.New(impair.Config(imp.In), r, 0)
	}
	s.rt, s.tr = getRun(sh), tr
	s.IO = &tr.io
	s.strictOrder = imp.In.Duplicate == 0 && imp.In.Reorder == 0 && imp.In.Jitter == 0
	s.oneReply = imp.In.Duplicate == 0 && imp.Out.Duplicate == 0
	s.lastTick = -1
	s.syncProfile()
	s.Join()
	return s, nil
}

// Reuse implements simclient.Reusable: the socket carries the next flow
// unless it was closed (a disconnect step, Close) or cancelled, or this
// flow reached a game instance, whose server-side seat and state belong to
// this socket's address and would meet the next flow. Sequence ids go on
// from this session's, and so does the count of ids used, so a late reply
// to one of its requests cannot pass for the next session's and is known
// as stale, not taken for a reply to a request never sent.
//
// The next session is this one, reset in place: a client keeps its
// socket, sequence ids, buffers, and what simclient.Base.Renew keeps, so
// a closed-model client's iteration allocates nothing.
func (s *session) Reuse(id int, flow *scenario.Flow) (simclient.Session, bool) {
	fi := s.FlowIndex(flow)
	if fi < 0 || s.disconnect || s.inst.IsValid() || s.tr.closed.Load() || s.tr.cancelled.Load() || s.p.active {
		return nil, false
	}
	// What the client keeps; everything else starts from zero.
	if l := s.lists; l != nil {
		l.rooms, l.prev = l.rooms[:0], l.prev[:0]
	}
	*s = session{Base: s.Renew(id, fi), rt: s.rt, tr: s.tr, strictOrder: s.strictOrder,
		oneReply: s.oneReply, answered: s.answered, seq: s.seq, sent: s.sent, obuf: s.obuf[:0], lists: s.lists, lastTick: -1}
	s.syncProfile()
	return s, true
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

func (s *session) syncProfile() {
	if p := s.rt.profile.Load(); p >= 0 {
		s.profile, s.known = udpwire.Profile(p), true
	}
}

// Close implements simclient.Session.
func (s *session) Close() error {
	return s.CloseOnce(func() error {
		s.tr.cancel()
		return s.tr.close()
	})
}

// LocalAddr returns the session socket's address (tests, reports).
func (s *session) LocalAddr() netip.AddrPort { return s.tr.localAddr() }

// Run implements simclient.Session.
func (s *session) Run(ctx context.Context, due time.Time) error {
	s.tr.watch(ctx, s.Shared)
	return s.Play(ctx, due, s)
}

// Idle implements simclient.Idler: the receive buffer goes back to the
// pool while the session pauses.
func (s *session) Idle() { s.tr.idle() }

// Step implements simclient.Stepper.
func (s *session) Step(ctx context.Context, i int, st *scenario.Step) error {
	s.mayAwait = false
	switch st.Kind {
	case stepkit.Disconnect:
		s.closeStep(i)
		return nil
	case scenario.Malformed:
		return s.malformed(s.Stop, i, st)
	case scenario.RateProbe:
		return s.rateProbe(s.Stop, i, st)
	}
	if s.disconnect {
		return s.Fail(i, st, simclient.ReasonClosed, errors.New("the flow disconnected earlier"))
	}
	intended := s.Next
	s.pw.replied = 0
	var sent time.Time
	var err error
	// A step whose requests can suspend (request): running it again from
	// its start, on Resume, reaches the same request call first.
	s.mayAwait = true
	switch st.Kind {
	case stepkit.ListRooms:
		sent, err = s.list(st.Policy, intended)
	case stepkit.CreateRoom:
		sent, err = s.create(i, st, intended)
	case stepkit.Join:
		sent, err = s.join(s.Stop, i, st, intended) // ctx bounds only the wait for the group's room
	case Hello, InstanceJoin:
		typ := udpwire.ClientHello
		if st.Kind == InstanceJoin {
			typ = udpwire.ClientJoinRequest
		}
		if !s.inst.IsValid() {
			return s.Fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
		}
		sent, err = s.instRequest(typ, st, intended)
	case stepkit.Ready, Leave:
		if !s.inst.IsValid() {
			return s.Fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
		}
		typ, v := udpwire.ClientReady, uint32(0)
		if st.Kind == Leave {
			typ, v = udpwire.ClientDisconnect, uint32(leaveReason(st))
		}
		sent, err = s.notify(typ, v, intended)
	case Ping:
		return s.pings(s.Stop, i, st) // ctx bounds only the pauses between pings
	case stepkit.WaitGameStart:
		sent, err = s.waitGameStart(st, intended)
	default:
		return s.Fail(i, st, simclient.ReasonSocket, fmt.Errorf("step %q is not a udp-lobby step", st.Kind))
	}
	return s.finish(i, st, intended, sent, err)
}

// finish ends step i (st) at its last reply's arrival (Base.FinishAt),
// now when it had none. A function of its own, never inlined: the third
// time FinishAt takes would widen Step's frame, which sits below every
// request (simclient.StackBudget).
//
//go:noinline
func (s *session) finish(i int, st *scenario.Step, intended, sent time.Time, err error) error {
	return s.FinishAt(i, st, intended, sent, s.pw.replied.Time(), err)
}

// list asks for the room list and copies it into the session's lists.
func (s *session) list(pol scenario.RequestPolicy, intended time.Time) (time.Time, error) {
	sent, err := s.request(&pending{typ: udpwire.LobbyListRooms, to: s.rt.lobby, intended: instant.Of(intended)}, pol)
	return sent, err
}

func (s *session) create(i int, st *scenario.Step, intended time.Time) (time.Time, error) {
	sent, err := s.request(&pending{typ: udpwire.LobbyCreateRoom, to: s.rt.lobby, intended: instant.Of(intended)}, st.Policy)
	if err == simclient.ErrSuspended {
		return sent, err
	}
	if err != nil {
		if s.Member.Group != nil {
			s.Member.Group.FailRoom(err)
		}
		return sent, err
	}
	s.shareRoom()
	return sent, nil
}

func (s *session) join(ctx context.Context, i int, st *scenario.Step, intended time.Time) (time.Time, error) {
	var room uint32
	rr := stepkit.RoomOf(st)
	switch rr.Kind {
	case stepkit.RoomID:
		room = rr.ID
	case stepkit.RoomCreated:
		if r, ok, waited := s.CreatedRoom(); ok {
			room = r.ID
			if waited {
				intended = time.Now() // after a suspended wait (GroupRoom)
			}
			break
		}
		r, err := s.GroupRoom(ctx, st)
		if err != nil {
			return time.Time{}, err
		}
		room = r.ID
		intended = time.Now() // the wait is the step's, not the request's
	default: // random-waiting
		// Its list and join requests do not suspend: running the step
		// again would list again.
		s.mayAwait = false
		var err error
		if room, err = s.pickRoom(st, intended); err != nil {
			return time.Time{}, err
		}
		intended = time.Now()
	}
	return s.request(&pending{typ: udpwire.LobbyJoinRoom, to: s.rt.lobby, roomID: room, intended: instant.Of(intended)}, st.Policy)
}

// pickRoom lists the rooms (intended then) and picks one at random among
// the Waiting ones with space, for a join with room random-waiting (st).
//
//go:noinline
func (s *session) pickRoom(st *scenario.Step, intended time.Time) (uint32, error) {
	if _, err := s.list(st.Policy, intended); err != nil {
		return 0, err
	}
	n := 0
	rooms := s.rooms()
	for _, r := range rooms {
		if r.State == udpwire.Waiting && r.Players < r.MaxPlayers {
			n++
		}
	}
	if n == 0 {
		return 0, &reqFail{Reason: simclient.ReasonNoRoom, Err: fmt.Errorf("no Waiting room with space among %d listed", len(rooms))}
	}
	k := s.Think.IntN(n)
	for _, r := range rooms {
		if r.State == udpwire.Waiting && r.Players < r.MaxPlayers {
			if k == 0 {
				return r.ID, nil
			}
			k--
		}
	}
	return 0, nil // not reached: k < n
}

// closeStep is step i, disconnect: the socket closes, and the step is
// recorded as done at once.
//
// Step's cases that need a frame of their own are methods never inlined:
// Step's frame sits on every client's goroutine stack below every request
// (simclient.StackBudget).
//
//go:noinline
func (s *session) closeStep(i int) {
	start := time.Now()
	s.disconnect = true
	_ = s.tr.close()
	now := time.Now()
	s.Rec.Record(s.StepKey(i), start, start, now)
	s.Next = now
}

// instRequest sends typ (CLIENT_HELLO or CLIENT_JOIN_REQUEST) to the
// instance for step st and waits for its reply.
//
//go:noinline
func (s *session) instRequest(typ udpwire.MsgType, st *scenario.Step, intended time.Time) (time.Time, error) {
	sent, err := s.request(&pending{typ: typ, to: s.inst, inst: true, intended: instant.Of(intended)}, st.Policy)
	if err == nil && typ == udpwire.ClientJoinRequest {
		s.instJoined = true
	}
	return sent, err
}

// series is the place of a ping series in its step (pings): ping k is
// next, sent base + k×interval or when ping k-1 (answered at prev) allows.
// k is 0 outside a series; above 0 between steps only while the session
// is suspended in the pause before ping k.
type series struct {
	base, prev instant.Instant
	step, k    int32 // a step's index, and a ping's (stepkit.Series: at most a million)
}

// pings sends the step's Count pings Interval apart (stepkit.Series) on a fixed schedule: ping k
// is intended at start + k×interval, so a slow reply delays the next ping
// but its lateness is measured. With interval 0 the pings go back to back,
// each intended when the previous one was answered
// (simclient.SeriesIntended).
func (s *session) pings(ctx context.Context, i int, st *scenario.Step) error {
	if !s.inst.IsValid() {
		return s.Fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
	}
	key := s.StepKey(i)
	ser, _ := st.Params.(stepkit.Series)
	// The series' place is kept in the session, not on the stack: a
	// suspended pause (simclient.Base.Pause) ends the goroutine, and
	// Resume runs this step again, which goes on at ping sr.k.
	sr := &s.series
	resumed := int(sr.step) == i && sr.k > 0 // the pause before ping sr.k is over
	if !resumed {
		next := instant.Of(s.Next)
		*sr = series{step: int32(i), base: next, prev: next}
	}
	for ; int(sr.k) < ser.Count; sr.k++ {
		intended := simclient.SeriesIntended(sr.base.Time(), sr.prev.Time(), int(sr.k), ser.Interval)
		if sr.k > 0 && !resumed {
			if ctx.Err() != nil {
				// The stop signal: a back-to-back series has no pause to end.
				sr.k = 0
				return s.Fail(i, st, simclient.ReasonCancelled, ctx.Err())
			}
			if ser.Interval > 0 {
				if err := s.Pause(ctx, i, st, intended, i); err != nil {
					if err != simclient.ErrSuspended {
						sr.k = 0
					}
					return err
				}
			}
		}
		resumed = false
		ct := ClientTime(sr.base.Time())
		sent, err := s.request(&pending{typ: udpwire.ClientPing, to: s.inst, inst: true, value: ct, intended: instant.Of(intended)}, st.Policy)
		if err == simclient.ErrSuspended {
			// Waiting for ping sr.k's reply: Resume runs this step
			// again, which goes on at the same ping and request.
			return err
		}
		if err != nil {
			sr.k = 0
			return s.StepErr(i, st, err)
		}
		ready := sr.prev.Time() // a slow reply delays the next ping: its wait, not the harness's
		now := time.Now()
		sr.prev = instant.Of(now)
		s.Rec.RecordReady(key, intended, ready, sent, now)
	}
	sr.k = 0
	s.Next = time.Now()
	return nil
}

// ClientTime is a CLIENT_PING's clientTime: the microseconds since its
// ping series began at base (udp-lobby.md §15; the server echoes it in
// SERVER_PONG), the wrap of a uint32 past 71 minutes.
func ClientTime(base time.Time) uint32 { return uint32(time.Since(base) / time.Microsecond) }

// notify sends a request that has no reply (CLIENT_READY, CLIENT_DISCONNECT).
func (s *session) notify(typ udpwire.MsgType, v uint32, intended time.Time) (time.Time, error) {
	s.seq++
	s.useIDs(1)
	s.obuf = s.encode(s.obuf[:0], &pending{typ: typ, value: v, seq: s.seq}, s.profile)
	err := s.tr.send(s.inst, s.obuf)
	sent := s.tr.sent.Time()
	if err != nil {
		s.Rec.Fail(s.rt.keys[typ], simclient.ReasonSocket, time.Now())
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	s.Rec.Record(s.rt.keys[typ], intended, sent, time.Now())
	// No reply will come to pump the impairment's queue: send what it
	// holds now, at its due time (else a delayed CLIENT_DISCONNECT waited
	// for the next receive, or was lost with the socket, and the server
	// kept the room: soak filled the instance pool that way).
	if err := s.tr.drainOut(); err != nil {
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	if typ == udpwire.ClientReady {
		s.drain()
	}
	return sent, nil
}

// drain handles whatever already arrived, without waiting.
func (s *session) drain() {
	for {
		data, from, err := s.tr.recv(time.Now())
		if err != nil {
			return
		}
		s.handle(data, from)
	}
}

func (s *session) waitGameStart(st *scenario.Step, intended time.Time) (time.Time, error) {
	key := s.rt.keys[udpwire.ServerGameStart]
	// A wait, not a request: the stop signal ends it (the socket is not
	// used again after that).
	defer context.AfterFunc(s.Stop, s.tr.cancel)()
	deadline := time.Now().Add(st.Policy.Timeout)
	for !s.gameStarted {
		if s.kicked {
			s.Rec.Fail(key, simclient.ReasonClosed, time.Now())
			return intended, &reqFail{Reason: simclient.ReasonClosed, Err: errors.New("the instance sent SERVER_DISCONNECT before the game started")}
		}
		data, from, err := s.tr.recv(deadline)
		switch {
		case err == nil:
			s.handle(data, from)
		case errors.Is(err, errTimeout):
			s.Rec.Fail(key, result.ReasonTimeout, time.Now())
			return intended, &reqFail{Reason: result.ReasonTimeout, Err: fmt.Errorf("no SERVER_GAME_START within %s", st.Policy.Timeout)}
		default:
			return intended, err
		}
	}
	s.Rec.Record(key, intended, intended, s.replyAt())
	return intended, nil
}

// replyAt is when the reply recv last returned reached this host
// (transport.replyAt).
func (s *session) replyAt() time.Time { return s.tr.replyAt(s.Shared) }

// leaveReason is the CLIENT_DISCONNECT reason of a leave step (0 for
// another step).
func leaveReason(st *scenario.Step) uint8 {
	p, _ := st.Params.(LeaveParams)
	return p.Reason
}
