package tcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

type runKey struct{}

// runState is what all TCP sessions of a run share: message keys.
type runState struct {
	keys [256]metrics.Key
	dial metrics.Key // tcp_dial: how long each successful TCP dial took
}

func getRun(sh *simclient.Shared) *runState {
	return sh.Value(runKey{}, func() any {
		rt := &runState{}
		for _, t := range []tcpwire.Type{tcpwire.TypeConnectReq, tcpwire.TypeListRoomsReq, tcpwire.TypeCreateRoomReq,
			tcpwire.TypeJoinRoomReq, tcpwire.TypeReadyReq, tcpwire.TypeStartReq, tcpwire.TypeDisconnect,
			tcpwire.TypeCountdown, tcpwire.TypeGameStart} {
			rt.keys[t] = sh.MessageKey(t.String())
		}
		rt.dial = sh.MessageKey(DialMessage)
		return rt
	}).(*runState)
}

// DialMessage is the message-table name under which every successful TCP
// dial of a session is recorded (from dial start to connected): the
// connect step measures CONNECT_REQ to CONNECT_ACK only when the
// connection was dialed ahead (Prepare) or kept, so the dial is reported
// apart.
const DialMessage = "tcp_dial"

// session is one simulated TCP lobby client.
type session struct {
	simclient.Base
	rt  *runState
	src netip.Addr
	dst netip.AddrPort

	fc  *frameConn
	dec *tcpwire.Decoder
	req []byte // the pending request frame, for violation samples

	// protocol state
	name        tcpwire.Name
	hash        uint64
	room        uint32
	members     map[uint64]bool // hash → announced ready
	rooms       []tcpwire.RoomInfo
	lastCount   int // last COUNTDOWN seconds, -1 none
	countdowns  int
	gameStarted bool
	gameStart   tcpwire.GameStart
	lastError   *tcpwire.ErrorMsg
	closedBy    error  // the server ended the connection
	salvaged    bool   // the frame being handled was read by tcplobby.Salvage
	scriptIn    []byte // the payload a script's Recv returned last, for Follow

	// pending request
	joining   uint32 // room of a pending JOIN_ROOM_REQ
	sentReady bool   // a READY_REQ is pending
	pend      tcpwire.Type
	reqType   tcpwire.Type // the pending request's type
	done      bool
	refusal   *reqFail

	cancelCtx context.Context
	// cset is the set whose context's end cancels the session's reads and
	// a dial under way (watch), cslot its place there.
	cset  *simclient.CancelSet
	cslot int32

	// dialing, when not nil, is closed when the dial Prepare started is
	// over: it then installed fc, or left its failure in dialErr.
	dialing    chan struct{}
	dialErr    error
	dialCancel context.CancelFunc

	mu     sync.Mutex // guards fc against Close during a dial
	closed bool
	robust bool // a malformed or rate_probe step ran: the connection is not reused

	io simclient.IOCount // the payload bytes of the session's connections (Base.IO)
}

// reqFail is a failed request (simclient.RequestError); Reason names it in the metrics.
type reqFail = simclient.RequestError

// New is the tcp-lobby simclient.Factory. The connection is opened by the
// first step that needs it.
func New(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
	s := &session{}
	if err := s.Begin(sh, id, flow); err != nil {
		return nil, err
	}
	s.init(src)
	s.Join()
	return s, nil
}

// init sets what a session, whose Base is set, starts with: no
// connection yet.
func (s *session) init(src netip.Addr) {
	sh := s.Shared
	s.rt = getRun(sh)
	s.src, s.dst = src, sh.Target
	s.dec = tcpwire.NewDecoder(tcpwire.Options{})
	s.members = map[uint64]bool{}
	s.lastCount = -1
	s.name = tcpwire.MakeName(fmt.Sprintf("bot%d", s.ID))
	s.IO = &s.io
	if s.fc != nil {
		s.fc.io = &s.io // a kept connection (Reuse)
	}
}

// Close implements simclient.Session.
func (s *session) Close() error {
	return s.CloseOnce(func() error {
		s.mu.Lock()
		s.closed = true
		fc := s.fc
		s.mu.Unlock()
		if s.dialCancel != nil {
			s.dialCancel()
		}
		if fc != nil {
			fc.cancel()
			return fc.close()
		}
		return nil
	})
}

// Run implements simclient.Session.
func (s *session) Run(ctx context.Context, due time.Time) error {
	s.watch(ctx)
	defer s.unwatch()
	return s.Play(ctx, due, s)
}

// Resume implements simclient.Resumer: as Run, the connection's reads and
// a dial under way end with ctx while the flow goes on.
func (s *session) Resume(ctx context.Context) error {
	s.watch(ctx)
	defer s.unwatch()
	return s.Base.Resume(ctx)
}

// watch makes ctx's end cancel the connection's reads and a dial under
// way (Cancel), until unwatch (when Run or Resume returns): through run
// sh's set for ctx, one context.AfterFunc for all its clients, where one
// each took the context's lock at every client's start and allocated.
func (s *session) watch(ctx context.Context) {
	s.cancelCtx = ctx
	s.cset = s.Shared.Cancels(ctx)
	s.cset.Add(s, &s.cslot)
}

// unwatch ends watch's.
func (s *session) unwatch() { s.cset.Remove(&s.cslot) }

// Cancel implements simclient.Canceler: the connection's reads and a dial
// under way end.
func (s *session) Cancel() {
	s.mu.Lock()
	fc := s.fc
	s.mu.Unlock()
	if fc != nil {
		fc.cancel()
	}
	if s.dialCancel != nil {
		s.dialCancel()
	}
}

// Prepare implements simclient.Preparer: when the first step this member
// runs is connect, the TCP connection is dialed now, in the background,
// ahead of the session's due time. The dial installs the connection as a
// kept one is (Reuse), so the connect step goes the same way for both: it
// finds the connection open and only sends CONNECT_REQ. It waits for a
// dial still under way, and reports a failed one as it would its own
// dial's failure. Call it once, before Run.
func (s *session) Prepare() {
	if s.fc != nil || s.dialing != nil {
		return
	}
	var first *scenario.Step
	for i := range s.Flow.Steps {
		if st := &s.Flow.Steps[i]; st.Only.Runs(s.Member.Index) {
			first = st
			break
		}
	}
	if first == nil || first.Kind != stepkit.Connect {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.dialing, s.dialCancel = done, cancel
	go func() {
		defer close(done)
		defer cancel()
		fc, err := s.open(ctx, first.Policy.Timeout)
		if err == nil {
			err = s.install(fc)
		}
		s.dialErr = err
	}()
}

// connect gives the session its connection: the one it has (kept from the
// previous flow, or dialed ahead by Prepare: waited for if still dialing),
// else a new one dialed now.
func (s *session) connect(timeout time.Duration) error {
	if s.dialing != nil {
		<-s.dialing
		s.dialing = nil
		if s.dialErr != nil {
			return s.dialErr
		}
	}
	if s.fc != nil {
		if s.fc.closed.Load() || s.closedBy != nil {
			return &reqFail{Reason: simclient.ReasonClosed, Err: errors.New("the connection is closed")}
		}
		return nil
	}
	fc, err := s.open(context.Background(), timeout)
	if err != nil {
		return err
	}
	if err := s.install(fc); err != nil {
		return err
	}
	if s.cancelCtx != nil && s.cancelCtx.Err() != nil {
		fc.cancel()
	}
	return nil
}

// open dials the lobby from the session's source address, records the
// dial's duration (DialMessage) and names a failure: conn_refused, timeout,
// a failed start (simclient.StartError) for a local one.
func (s *session) open(ctx context.Context, timeout time.Duration) (*frameConn, error) {
	var la net.Addr
	if s.src.IsValid() {
		la = &net.TCPAddr{IP: s.src.AsSlice()}
	}
	start := time.Now()
	fc, err := dialContext(ctx, la, net.TCPAddrFromAddrPort(s.dst), s.Shared.Sweeper, s.Shared.SocketBuffer, timeout)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, errCancelled
		case errors.Is(err, syscall.ECONNREFUSED):
			return nil, &reqFail{Reason: result.ReasonConnRefused, Err: err}
		case isTimeout(err):
			return nil, &reqFail{Reason: result.ReasonTimeout, Err: err}
		}
		// No descriptor, no free port: a failed start (simclient.StartError).
		reason, err := simclient.OpenFailure(err)
		return nil, &reqFail{Reason: reason, Err: err}
	}
	fc.io = &s.io
	s.Rec.Record(s.rt.dial, start, start, time.Now())
	return fc, nil
}

// install makes fc the session's connection, unless Close came first.
func (s *session) install(fc *frameConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		fc.close()
		return errCancelled
	}
	s.fc = fc
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Step implements simclient.Stepper.
func (s *session) Step(ctx context.Context, i int, st *scenario.Step) error {
	switch st.Kind {
	case scenario.Malformed:
		s.robust = true
		return s.malformed(s.Stop, i, st)
	case scenario.RateProbe:
		s.robust = true
		return s.rateProbe(s.Stop, i, st)
	}
	intended := s.Next
	sent := time.Now()
	var err error
	switch st.Kind {
	case stepkit.Connect:
		sent, err = s.doConnect(st, intended)
	case stepkit.ListRooms:
		sent, err = s.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck, st.Policy, intended)
	case stepkit.CreateRoom:
		sent, err = s.create(st, intended)
	case stepkit.Join:
		sent, err = s.join(s.Stop, st, intended) // ctx bounds only the wait for the group's room
	case stepkit.Ready:
		sent, err = s.request(&tcpwire.ReadyReq{}, tcpwire.TypePlayerReady, st.Policy, intended)
	case Start:
		sent, err = s.request(&tcpwire.StartReq{}, tcpwire.TypeCountdown, st.Policy, intended)
	case WaitCountdown:
		err = s.wait(tcpwire.TypeCountdown, st.Policy.Timeout, intended)
	case stepkit.WaitGameStart:
		err = s.wait(tcpwire.TypeGameStart, st.Policy.Timeout, intended)
	case stepkit.Disconnect:
		err = s.disconnect(intended)
	default:
		return s.Fail(i, st, simclient.ReasonSocket, fmt.Errorf("step %q is not a tcp-lobby step", st.Kind))
	}
	return s.Finish(i, st, intended, sent, err)
}

// doConnect logs in: CONNECT_REQ → CONNECT_ACK on the session's connection,
// dialed first if it has none (a dial failure fails the step). The step is
// measured from intended, its send from CONNECT_REQ: a dial done ahead
// (Prepare) or a kept connection costs it nothing, a dial in the step
// counts in its send lag; every dial is recorded apart (DialMessage).
func (s *session) doConnect(st *scenario.Step, intended time.Time) (time.Time, error) {
	if err := s.connect(st.Policy.Timeout); err != nil {
		if rf, ok := err.(*reqFail); ok {
			s.Rec.Fail(s.rt.keys[tcpwire.TypeConnectReq], rf.Reason, time.Now())
		}
		return time.Now(), err
	}
	sent := time.Now()
	name := s.name
	if n := stepkit.NameOf(st); n != "" {
		name = tcpwire.MakeName(n)
		s.name = name
	}
	_, err := s.requestFrom(&tcpwire.ConnectReq{PlayerName: name}, tcpwire.TypeConnectAck, st.Policy, intended, sent)
	return sent, err
}

func (s *session) create(st *scenario.Step, intended time.Time) (time.Time, error) {
	name := stepkit.NameOf(st)
	if name == "" {
		name = fmt.Sprintf("room%d", s.ID)
	}
	sent, err := s.request(&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName(name), PlayerName: s.name}, tcpwire.TypeCreateRoomAck, st.Policy, intended)
	if g := s.Member.Group; g != nil {
		if err != nil {
			g.FailRoom(err)
		} else {
			g.SetRoom(simclient.Room{ID: s.room})
		}
	}
	return sent, err
}

func (s *session) join(ctx context.Context, st *scenario.Step, intended time.Time) (time.Time, error) {
	var room uint32
	rr := stepkit.RoomOf(st)
	switch rr.Kind {
	case stepkit.RoomID:
		room = rr.ID
	case stepkit.RoomCreated:
		r, err := s.GroupRoom(ctx, st)
		if err != nil {
			return intended, err
		}
		room = r.ID
		intended = time.Now()
	default:
		if _, err := s.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck, st.Policy, intended); err != nil {
			return intended, err
		}
		var cands []uint32
		for _, r := range s.rooms {
			if !r.InGame && r.PlayerCount < r.MaxPlayers {
				cands = append(cands, r.ID)
			}
		}
		if len(cands) == 0 {
			return intended, &reqFail{Reason: simclient.ReasonNoRoom, Err: fmt.Errorf("no open room with space among %d listed", len(s.rooms))}
		}
		room = cands[s.Think.IntN(len(cands))]
		intended = time.Now()
	}
	s.joining = room
	return s.request(&tcpwire.JoinRoomReq{RoomID: room, PlayerName: s.name}, tcpwire.TypeJoinRoomAck, st.Policy, intended)
}

func (s *session) disconnect(intended time.Time) error {
	key := s.rt.keys[tcpwire.TypeDisconnect]
	if s.fc == nil {
		s.Rec.Record(key, intended, intended, time.Now())
		return nil
	}
	sent := time.Now()
	_, err := s.fc.write(&tcpwire.Disconnect{})
	s.fc.close()
	s.room, s.members = 0, map[uint64]bool{}
	if err != nil {
		s.Rec.Fail(key, simclient.ReasonSocket, time.Now())
		return &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	s.Rec.Record(key, intended, sent, time.Now())
	return nil
}

// request sends m and waits up to pol.Timeout for a frame of type want
// (judged by handle); it records the request under m's message key.
func (s *session) request(m tcpwire.Message, want tcpwire.Type, pol scenario.RequestPolicy, intended time.Time) (time.Time, error) {
	if err := s.connect(pol.Timeout); err != nil {
		if rf, ok := err.(*reqFail); ok {
			s.Rec.Fail(s.rt.keys[m.Type()], rf.Reason, time.Now())
		}
		return time.Now(), err
	}
	return s.requestFrom(m, want, pol, intended, time.Now())
}

func (s *session) requestFrom(m tcpwire.Message, want tcpwire.Type, pol scenario.RequestPolicy, intended, sent time.Time) (time.Time, error) {
	key := s.rt.keys[m.Type()]
	b, err := s.fc.write(m)
	s.req = b
	if err != nil {
		reason := connReason(err)
		s.Rec.Fail(key, reason, time.Now())
		return sent, &reqFail{Reason: reason, Err: err}
	}
	s.pend, s.reqType, s.done, s.refusal = want, m.Type(), false, nil
	s.sentReady = m.Type() == tcpwire.TypeReadyReq
	defer func() { s.pend = 0 }()
	deadline := time.Now().Add(pol.Timeout)
	for !s.done {
		p, err := s.fc.next(deadline)
		if err != nil {
			if errors.Is(err, errTimeout) {
				s.Rec.Fail(key, result.ReasonTimeout, time.Now())
				s.Shared.Observe(s.ID, time.Now(), 0, false)
				return sent, &reqFail{Reason: result.ReasonTimeout, Err: fmt.Errorf("no %v within %s", want, pol.Timeout)}
			}
			if errors.Is(err, errCancelled) {
				s.Rec.Cut(key, time.Since(sent), pol.Timeout)
				return sent, errCancelled
			}
			reason := s.readFailed(err)
			s.Rec.Fail(key, reason, time.Now())
			return sent, &reqFail{Reason: reason, Err: err}
		}
		s.handle(p)
		if s.refusal != nil {
			s.Rec.Fail(key, s.refusal.Reason, time.Now())
			s.Shared.Observe(s.ID, time.Now(), 0, false)
			return sent, s.refusal
		}
	}
	now := time.Now()
	s.Rec.Record(key, intended, sent, now)
	s.Shared.Observe(s.ID, now, now.Sub(intended), true)
	return sent, nil
}

// connReason names a socket error.
func connReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return result.ReasonConnReset
	case errors.Is(err, syscall.ECONNREFUSED):
		return result.ReasonConnRefused
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return simclient.ReasonClosed
	}
	return simclient.ReasonSocket
}

// readFailed records a read error: a framing error is a violation, an end
// of stream the server closing. It returns the failure reason.
func (s *session) readFailed(err error) string {
	if rule := tcpwire.RuleOf(err); rule != "" {
		s.violation(rule, s.fc.buf[s.fc.r:s.fc.w], s.req, err.Error())
		return result.ReasonViolation
	}
	s.closedBy = err
	return connReason(err)
}

// wait waits for a frame of type t (COUNTDOWN or GAME_START), done at once
// if one was already seen.
func (s *session) wait(t tcpwire.Type, timeout time.Duration, intended time.Time) error {
	key := s.rt.keys[t]
	seen := func() bool {
		if t == tcpwire.TypeCountdown {
			return s.countdowns > 0 || s.gameStarted
		}
		return s.gameStarted
	}
	if s.fc == nil {
		s.Rec.Fail(key, simclient.ReasonClosed, time.Now())
		return &reqFail{Reason: simclient.ReasonClosed, Err: errors.New("not connected")}
	}
	// A wait, not a request: the stop signal ends it (the connection is
	// not used again after that).
	fc := s.fc
	defer context.AfterFunc(s.Stop, fc.cancel)()
	deadline := time.Now().Add(timeout)
	for !seen() {
		p, err := s.fc.next(deadline)
		if err != nil {
			if errors.Is(err, errTimeout) {
				s.Rec.Fail(key, result.ReasonTimeout, time.Now())
				return &reqFail{Reason: result.ReasonTimeout, Err: fmt.Errorf("no %v within %s", t, timeout)}
			}
			if errors.Is(err, errCancelled) {
				s.Rec.Cut(key, 0, 0) // a wait for others' doing, not for a reply
				return errCancelled
			}
			reason := s.readFailed(err)
			s.Rec.Fail(key, reason, time.Now())
			return &reqFail{Reason: reason, Err: err}
		}
		s.handle(p)
		if t == tcpwire.TypeGameStart && s.lastError != nil && !s.gameStarted {
			e := s.lastError
			s.lastError = nil
			s.Rec.Fail(key, simclient.ReasonRefused, time.Now())
			return &reqFail{Reason: simclient.ReasonRefused, Err: errorRefusal("the room's start (waiting for GAME_START)", e)}
		}
	}
	s.Rec.Record(key, intended, intended, time.Now())
	return nil
}

func (s *session) violation(rule string, data, req []byte, detail string) {
	s.Rec.Violation(rule, time.Now(), data, req, detail)
}
