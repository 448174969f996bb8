package udpclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/impair"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

func init() { simclient.Register(string(scenario.UDPLobby), New) }

// runKey keys the per-run state in simclient.Shared.Value.
type runKey struct{}

// runState is what all UDP sessions of one run share.
type runState struct {
	auto    bool
	profile atomic.Int32 // udplobby.Profile, or -1 while "auto" has not guessed it
	keys    [256]metrics.Key
	ports   scenario.PortRange
}

func getRun(sh *simclient.Shared) *runState {
	return sh.Value(runKey{}, func() any {
		rt := &runState{ports: sh.Plan.InstancePorts}
		switch sh.Plan.HeaderProfile {
		case "rtype17":
			rt.profile.Store(int32(udplobby.ProfileRType17))
		case "auto":
			rt.auto = true
			rt.profile.Store(-1)
		default:
			rt.profile.Store(int32(udplobby.ProfileSpec))
		}
		for _, t := range []udplobby.MsgType{udplobby.LobbyListRooms, udplobby.LobbyCreateRoom, udplobby.LobbyJoinRoom,
			udplobby.ClientHello, udplobby.ClientJoinRequest, udplobby.ClientReady, udplobby.ClientPing,
			udplobby.ClientDisconnect, udplobby.ServerGameStart} {
			rt.keys[t] = sh.MessageKey(t.String())
		}
		return rt
	}).(*runState)
}

// session is one simulated UDP lobby client.
type session struct {
	sh     *simclient.Shared
	rt     *runState
	id     int
	flow   *scenario.Flow
	fi     int
	member simclient.Member
	rec    *metrics.Recorder
	tr     *transport
	think  *rand.Rand
	// thinkSrc is think's source, re-seeded for each session (begin).
	thinkSrc *rand.PCG
	timer    *time.Timer

	lobby netip.AddrPort
	inst  netip.AddrPort // zero until a create or join returned a port

	profile   udplobby.Profile
	known     bool // profile known (not auto, or guessed)
	seq       uint16
	sent      int // sequence ids used so far
	obuf      []byte
	msg       udplobby.Message
	rooms     []udplobby.Room
	prevRooms []udplobby.Room // the list before s.rooms, for compareLists

	// pending request, valid while p.active
	p pending

	// game state
	roomID      uint32
	created     uint32
	createdAt   time.Time
	instJoined  bool
	allReady    bool
	gameStarted bool
	gameEnded   bool
	kicked      bool
	lastTick    int
	lastEvent   [32]byte
	lastEventN  int
	disconnect  bool
	strictOrder bool

	next time.Time // intended send time of the next request

	// stop is the run's stop signal (simclient.StopContext), done with the
	// run's context too: waits end on it, requests in flight do not.
	stop context.Context

	curStep  int // index of the running step, -1 outside steps
	stale    int64
	badReply error
	refusal  *reqFail

	creator   bool // this member runs a create step of the flow
	closeOnce sync.Once
	leaveOnce sync.Once
}

type pending struct {
	active   bool
	typ      udplobby.MsgType
	to       netip.AddrPort
	inst     bool
	roomID   uint32
	value    uint32
	seq      uint16
	attempt  int
	intended time.Time
	sent     time.Time
}

// New is the udp-lobby simclient.Factory.
func New(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
	fi := sh.FlowIndex(flow)
	if fi < 0 {
		return nil, errors.New("udpclient: flow is not one of the plan's flows")
	}
	if !sh.Targets.UDPLobby.IsValid() {
		return nil, errors.New("udpclient: no UDP lobby target")
	}
	tr := &transport{}
	if err := tr.open(src, sh.SocketBuffer, sh.Sweeper); err != nil {
		return nil, simclient.OpenError(err)
	}
	if imp := sh.Plan.Impairment; !imp.IsZero() {
		r := sh.ImpairRand(id)
		tr.out = impair.New(impair.Config(imp.Out), r, 0)
		tr.in = impair.New(impair.Config(imp.In), r, 0)
	}
	return newSession(sh, id, flow, fi, tr), nil
}

// newSession is the first session of client id, playing flow (index fi)
// on tr.
func newSession(sh *simclient.Shared, id int, flow *scenario.Flow, fi int, tr *transport) *session {
	imp := sh.Plan.Impairment
	src := new(rand.PCG)
	s := &session{
		sh:          sh,
		rt:          getRun(sh),
		thinkSrc:    src,
		think:       rand.New(src),
		tr:          tr,
		lobby:       unmap(sh.Targets.UDPLobby),
		obuf:        make([]byte, 0, 64),
		strictOrder: imp.In.Duplicate == 0 && imp.In.Reorder == 0 && imp.In.Jitter == 0,
	}
	s.begin(id, flow, fi, sh.Join(fi))
	return s
}

// begin makes s client id's session of flow (index fi) at group place m:
// it sets what every session starts with; the caller has set what a
// client keeps from one session to the next (see Reuse).
func (s *session) begin(id int, flow *scenario.Flow, fi int, m simclient.Member) {
	s.id, s.flow, s.fi, s.member = id, flow, fi, m
	s.rec = s.sh.Recorder(id)
	s.sh.ReseedThink(s.thinkSrc, id)
	s.lastTick, s.curStep = -1, -1
	s.creator = simclient.Creates(flow, m.Index)
	s.syncProfile()
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
// socket, sequence ids, buffers, think-time generator (re-seeded for the
// new id), timer and, for a group of one, its group (Shared.Rejoin), so a
// closed-model client's iteration allocates nothing.
func (s *session) Reuse(id int, flow *scenario.Flow) (simclient.Session, bool) {
	fi := s.fi
	if flow != s.flow {
		fi = s.sh.FlowIndex(flow)
	}
	if fi < 0 || s.disconnect || s.inst.IsValid() || s.tr.closed.Load() || s.tr.cancelled.Load() || s.p.active {
		return nil, false
	}
	m := s.sh.Rejoin(fi, s.member)
	// What the client keeps; everything else starts from zero.
	sh, rt, tr, timer := s.sh, s.rt, s.tr, s.timer
	src, think := s.thinkSrc, s.think
	lobby, strict := s.lobby, s.strictOrder
	seq, sent, obuf := s.seq, s.sent, s.obuf[:0]
	rooms, prevRooms := s.rooms[:0], s.prevRooms[:0]
	*s = session{sh: sh, rt: rt, tr: tr, timer: timer, thinkSrc: src, think: think, lobby: lobby, strictOrder: strict,
		seq: seq, sent: sent, obuf: obuf, rooms: rooms, prevRooms: prevRooms}
	s.begin(id, flow, fi, m)
	return s, true
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

func (s *session) syncProfile() {
	if p := s.rt.profile.Load(); p >= 0 {
		s.profile, s.known = udplobby.Profile(p), true
	}
}

// Close implements simclient.Session.
func (s *session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.tr.cancel()
		err = s.tr.close()
		s.leaveGroup(errors.New("the creator's session ended"))
	})
	return err
}

func (s *session) leaveGroup(why error) {
	s.leaveOnce.Do(func() {
		if s.member.Group != nil && s.creator {
			// A creator that ends without creating must not leave its
			// members waiting out their timeouts.
			s.member.Group.FailRoom(why)
		}
		s.sh.Leave(s.member)
	})
}

// LocalAddr returns the session socket's address (tests, reports).
func (s *session) LocalAddr() netip.AddrPort { return s.tr.localAddr() }

// Run implements simclient.Session.
func (s *session) Run(ctx context.Context, due time.Time) error {
	if due.IsZero() {
		due = time.Now()
	}
	s.next = due
	s.stop = simclient.StopContext(ctx)
	s.tr.watch(ctx)
	defer s.leaveGroup(errCreatorEnded)
	return simclient.RunFlow(ctx, s.stop, s.flow, s.member.Index, func(i int, st *scenario.Step) error {
		s.curStep = i
		return s.step(ctx, i, st)
	})
}

// fail records a failed step and returns its error.
func (s *session) fail(i int, st *scenario.Step, reason string, err error) error {
	return simclient.FailStep(s.rec, s.sh.StepKey(s.fi, i), i, st, reason, err)
}

// stepErr wraps a request failure (already recorded for the message) as the
// step's failure.
func (s *session) stepErr(i int, st *scenario.Step, err error) error {
	reason, cause := simclient.StepFailure(err, errCancelled)
	return s.fail(i, st, reason, cause)
}

func (s *session) step(ctx context.Context, i int, st *scenario.Step) error {
	key := s.sh.StepKey(s.fi, i)
	switch st.Kind {
	case scenario.Think:
		return s.sleepUntil(s.stop, i, st, s.next.Add(st.Think.Sample(s.think)))
	case scenario.Barrier:
		return s.barrier(s.stop, i, st)
	case scenario.Disconnect:
		start := time.Now()
		s.disconnect = true
		_ = s.tr.close()
		now := time.Now()
		s.rec.Record(key, start, start, now)
		s.next = now
		return nil
	case scenario.Malformed:
		return s.malformed(s.stop, i, st)
	case scenario.RateProbe:
		return s.rateProbe(s.stop, i, st)
	}
	if s.disconnect {
		return s.fail(i, st, simclient.ReasonClosed, errors.New("the flow disconnected earlier"))
	}
	intended := s.next
	var sent time.Time
	var err error
	switch st.Kind {
	case scenario.ListRooms:
		sent, err = s.list(st.Policy, intended)
	case scenario.CreateRoom:
		sent, err = s.create(i, st, intended)
	case scenario.Join:
		sent, err = s.join(s.stop, i, st, intended) // ctx bounds only the wait for the group's room
	case scenario.Hello, scenario.InstanceJoin:
		typ := udplobby.ClientHello
		if st.Kind == scenario.InstanceJoin {
			typ = udplobby.ClientJoinRequest
		}
		if !s.inst.IsValid() {
			return s.fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
		}
		sent, err = s.request(pending{typ: typ, to: s.inst, inst: true, intended: intended}, st.Policy)
		if err == nil && typ == udplobby.ClientJoinRequest {
			s.instJoined = true
		}
	case scenario.Ready, scenario.Leave:
		if !s.inst.IsValid() {
			return s.fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
		}
		typ, v := udplobby.ClientReady, uint32(0)
		if st.Kind == scenario.Leave {
			typ, v = udplobby.ClientDisconnect, uint32(st.Reason)
		}
		sent, err = s.notify(typ, v, intended)
	case scenario.Ping:
		return s.pings(s.stop, i, st) // ctx bounds only the pauses between pings
	case scenario.WaitGameStart:
		sent, err = s.waitGameStart(st, intended)
	default:
		return s.fail(i, st, simclient.ReasonSocket, fmt.Errorf("step %q is not a udp-lobby step", st.Kind))
	}
	if err != nil {
		return s.stepErr(i, st, err)
	}
	now := time.Now()
	s.rec.Record(key, intended, sent, now)
	s.next = now
	return nil
}

// sleepUntil pauses until t (think times, ping intervals).
func (s *session) sleepUntil(ctx context.Context, i int, st *scenario.Step, t time.Time) error {
	s.next = t
	s.tr.idle()
	if err := simclient.SleepUntil(ctx, &s.timer, t); err != nil {
		return s.fail(i, st, simclient.ReasonCancelled, err)
	}
	return nil
}

func (s *session) barrier(ctx context.Context, i int, st *scenario.Step) error {
	now, err := simclient.Barrier(ctx, s.member.Group, s.rec, s.sh.StepKey(s.fi, i), i, st)
	if err == nil {
		s.next = now
	}
	return err
}

// list asks for the room list and copies it into s.rooms.
func (s *session) list(pol scenario.RequestPolicy, intended time.Time) (time.Time, error) {
	sent, err := s.request(pending{typ: udplobby.LobbyListRooms, to: s.lobby, intended: intended}, pol)
	return sent, err
}

func (s *session) create(i int, st *scenario.Step, intended time.Time) (time.Time, error) {
	sent, err := s.request(pending{typ: udplobby.LobbyCreateRoom, to: s.lobby, intended: intended}, st.Policy)
	if err != nil {
		if s.member.Group != nil {
			s.member.Group.FailRoom(err)
		}
		return sent, err
	}
	if s.member.Group != nil {
		s.member.Group.SetRoom(simclient.Room{ID: s.roomID, Port: s.inst.Port(), Addr: s.inst})
	}
	return sent, nil
}

func (s *session) join(ctx context.Context, i int, st *scenario.Step, intended time.Time) (time.Time, error) {
	var room uint32
	switch st.Room.Kind {
	case scenario.RoomID:
		room = st.Room.ID
	case scenario.RoomCreated:
		if r, ok := s.member.Group.RoomNow(); ok {
			room = r.ID
			break
		}
		tctx, cancel := context.WithTimeout(ctx, simclient.Budget(st.Policy))
		r, err := s.member.Group.WaitRoom(tctx)
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return time.Time{}, errCancelled
			case errors.Is(err, simclient.ErrNoRoom):
				return time.Time{}, &reqFail{Reason: simclient.ReasonCreatorFailed, Err: err}
			}
			return time.Time{}, &reqFail{Reason: reports.ReasonTimeout, Err: fmt.Errorf("the group's room was not created within %s", simclient.Budget(st.Policy))}
		}
		room = r.ID
		intended = time.Now() // the wait is the step's, not the request's
	default: // random-waiting
		if _, err := s.list(st.Policy, intended); err != nil {
			return time.Time{}, err
		}
		n := 0
		for _, r := range s.rooms {
			if r.State == udplobby.Waiting && r.Players < r.MaxPlayers {
				n++
			}
		}
		if n == 0 {
			return time.Time{}, &reqFail{Reason: simclient.ReasonNoRoom, Err: fmt.Errorf("no Waiting room with space among %d listed", len(s.rooms))}
		}
		k := s.think.IntN(n)
		for _, r := range s.rooms {
			if r.State == udplobby.Waiting && r.Players < r.MaxPlayers {
				if k == 0 {
					room = r.ID
					break
				}
				k--
			}
		}
		intended = time.Now()
	}
	return s.request(pending{typ: udplobby.LobbyJoinRoom, to: s.lobby, roomID: room, intended: intended}, st.Policy)
}

// pings sends st.Count pings st.Interval apart on a fixed schedule: ping k
// is intended at start + k×interval, so a slow reply delays the next ping
// but its lateness is measured. With interval 0 the pings go back to back,
// each intended when the previous one was answered
// (simclient.SeriesIntended).
func (s *session) pings(ctx context.Context, i int, st *scenario.Step) error {
	if !s.inst.IsValid() {
		return s.fail(i, st, simclient.ReasonNoRoom, errors.New("no instance: the flow has not created or joined a room"))
	}
	key := s.sh.StepKey(s.fi, i)
	base := s.next
	prev := base
	for k := 0; k < st.Count; k++ {
		intended := simclient.SeriesIntended(base, prev, k, st.Interval)
		if k > 0 && ctx.Err() != nil {
			// The stop signal: a back-to-back series has no pause to end.
			return s.fail(i, st, simclient.ReasonCancelled, ctx.Err())
		}
		if k > 0 && st.Interval > 0 {
			if err := s.sleepUntil(ctx, i, st, intended); err != nil {
				return err
			}
		}
		ct := uint32(time.Since(base) / time.Microsecond)
		sent, err := s.request(pending{typ: udplobby.ClientPing, to: s.inst, inst: true, value: ct, intended: intended}, st.Policy)
		if err != nil {
			return s.stepErr(i, st, err)
		}
		ready := prev // a slow reply delays the next ping: its wait, not the harness's
		prev = time.Now()
		s.rec.RecordReady(key, intended, ready, sent, prev)
	}
	s.next = time.Now()
	return nil
}

// notify sends a request that has no reply (CLIENT_READY, CLIENT_DISCONNECT).
func (s *session) notify(typ udplobby.MsgType, v uint32, intended time.Time) (time.Time, error) {
	s.seq++
	s.sent++
	s.obuf = s.encode(s.obuf[:0], pending{typ: typ, value: v, seq: s.seq}, s.profile)
	sent := time.Now()
	if err := s.tr.send(s.inst, s.obuf); err != nil {
		s.rec.Fail(s.rt.keys[typ], simclient.ReasonSocket, time.Now())
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	s.rec.Record(s.rt.keys[typ], intended, sent, time.Now())
	// No reply will come to pump the impairment's queue: send what it
	// holds now, at its due time (else a delayed CLIENT_DISCONNECT waited
	// for the next receive, or was lost with the socket, and the server
	// kept the room: soak filled the instance pool that way).
	if err := s.tr.drainOut(); err != nil {
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	if typ == udplobby.ClientReady {
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
	key := s.rt.keys[udplobby.ServerGameStart]
	// A wait, not a request: the stop signal ends it (the socket is not
	// used again after that).
	defer context.AfterFunc(s.stop, s.tr.cancel)()
	deadline := time.Now().Add(st.Policy.Timeout)
	for !s.gameStarted {
		if s.kicked {
			s.rec.Fail(key, simclient.ReasonClosed, time.Now())
			return intended, &reqFail{Reason: simclient.ReasonClosed, Err: errors.New("the instance sent SERVER_DISCONNECT before the game started")}
		}
		data, from, err := s.tr.recv(deadline)
		switch {
		case err == nil:
			s.handle(data, from)
		case errors.Is(err, errTimeout):
			s.rec.Fail(key, reports.ReasonTimeout, time.Now())
			return intended, &reqFail{Reason: reports.ReasonTimeout, Err: fmt.Errorf("no SERVER_GAME_START within %s", st.Policy.Timeout)}
		case errors.Is(err, errTruncated):
		default:
			return intended, err
		}
	}
	s.rec.Record(key, intended, intended, time.Now())
	return intended, nil
}
