package levclient

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Semantic rule ids this client reports besides the wire codec's L-… ids.
const (
	// RuleResponseTo: a reply's ResponseTo is not the MessageNumber of the
	// request it answers (or not 0 where the engine sends 0).
	RuleResponseTo = "L-RESPONSE-TO"
	// RuleReplyType: the reply's type is not a legal answer to the request.
	RuleReplyType = "L-REPLY-TYPE"
	// RuleAckReading: the server's acks fit only the other ack-bit reading.
	RuleAckReading = "L-ACK-READING"
	// RuleCheckValue: a Connect reply carries another CheckValue than 42.
	RuleCheckValue = "L-CONNECT-CHECK"
)

// Message names keyed in the metrics (Shared.MessageKey).
const (
	msgAck       = "ack"       // ack latency: a request's acked transmission → its ack
	msgDuplicate = "duplicate" // duplicate deliveries suppressed by the engine (count; latency 0)
)

// runKey keys the per-run state in simclient.Shared.Value.
type runKey struct{}

type runState struct {
	req       [32]metrics.Key // per request type
	ack, dup  metrics.Key
	closeKey  metrics.Key
	engineCfg levconn.Config
}

func getRun(sh *simclient.Shared) *runState {
	return sh.Value(runKey{}, func() any {
		rt := &runState{}
		for _, t := range []lv.RequestType{lv.ReqConnect, lv.ReqSecurity, lv.ReqAuthenticate, lv.ReqJoinServer,
			lv.ReqJoinGame, lv.ReqEcho, lv.ReqServerstatus} {
			rt.req[t] = sh.MessageKey(t.String())
		}
		rt.ack = sh.MessageKey(msgAck)
		rt.dup = sh.MessageKey(msgDuplicate)
		rt.closeKey = sh.MessageKey("CloseConnection")
		if c, ok := sh.Value(engineKey{}, func() any { return levconn.Config{} }).(levconn.Config); ok {
			rt.engineCfg = c
		}
		return rt
	}).(*runState)
}

// engineKey keys an optional levconn.Config in Shared.Value that overrides
// the engine's timings for a run (tests shorten LostAfter; zero fields keep
// the engine's defaults). Set it with SetEngineConfig before the first
// session is created.
type engineKey struct{}

// SetEngineConfig makes every session of sh's run use cfg for its
// connection engine (zero fields: the engine's defaults). It must be called
// before the first session is created; it reports whether it took effect.
func SetEngineConfig(sh *simclient.Shared, cfg levconn.Config) bool {
	got := sh.Value(engineKey{}, func() any { return cfg })
	c, ok := got.(levconn.Config)
	return ok && c == cfg
}

// session is one simulated Leviathan client.
type session struct {
	simclient.Base
	rt    *runState
	d     *levconn.Driver
	waker *simclient.Waker
	link  *link
	buf   []byte
	// cset is the set whose context's end cancels the driver's reads
	// (watch), cslot its place there.
	cset  *simclient.CancelSet
	cslot int32

	closed    bool // close step done, or the server closed
	serverBye bool // CloseConnection received
	player    int
	await     uint32 // our response whose confirmation next1 reports (errConfirmed)
	seated    bool   // join_server or join_game succeeded: the server holds a player for the socket
	robust    bool   // a malformed or rate_probe step ran
}

// link is what the driver's callbacks reach: the session using the
// connection now, which changes when the connection is reused.
type link struct {
	rec   *metrics.Recorder
	waker *simclient.Waker
	io    simclient.IOCount // the connection's payload bytes (Base.IO)
	seen  lnSeen            // the last Ln datagrams received (received)
}

// New is the leviathan simclient.Factory.
func New(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
	s := &session{}
	if err := s.Begin(sh, id, flow); err != nil {
		return nil, err
	}
	rt := getRun(sh)
	s.rt, s.buf = rt, make([]byte, 0, 256)
	l := &link{rec: s.Rec}
	s.link = l
	s.IO = &l.io
	opt := levconn.DriverOptions{
		Config:       rt.engineCfg,
		Local:        src,
		KernelStamps: true,
		SocketBuffer: max(sh.SocketBuffer, 0),
		OnMalformed: func(b []byte, err error) {
			rule, detail := RuleMalformed, err.Error()
			var le *lv.Error
			if errors.As(err, &le) {
				rule, detail = string(le.Rule), le.Detail
			}
			l.rec.Violation(rule, time.Now(), b, nil, detail)
		},
		OnSend: func(b []byte) { l.io.Sent(len(b)) },
		OnRecv: l.received,
	}
	if imp := sh.Plan.Impairment; !imp.IsZero() {
		opt.In, opt.Out = levconn.Impair(imp.In), levconn.Impair(imp.Out)
		opt.Rand = sh.ImpairRand(id)
	}
	if sh.Sweeper != nil {
		opt.Wake = func(t time.Time) {
			if t.IsZero() {
				l.waker.Disarm()
			} else {
				l.waker.Arm(t)
			}
		}
	}
	target := netip.AddrPortFrom(sh.Target.Addr().Unmap(), sh.Target.Port())
	if sh.Flows != nil { // a virtual flow of the run's range, not a socket
		f, err := sh.Flows.Conn()
		if err != nil {
			return nil, simclient.OpenError(err)
		}
		opt.Flow, opt.OnStray = f, func([]byte, netip.AddrPort) { sh.StrayDatagram() }
	}
	d, err := levconn.Dial(target, opt)
	if err != nil {
		if opt.Flow != nil {
			opt.Flow.Close()
		}
		return nil, simclient.OpenError(err)
	}
	s.d = d
	sh.ReceiveStamps(d.KernelStamps())
	if sh.Sweeper != nil {
		s.waker = sh.Sweeper.Add(d)
		l.waker = s.waker
	}
	s.Join()
	return s, nil
}

// Close implements simclient.Session.
func (s *session) Close() error {
	return s.CloseOnce(func() error {
		err := s.d.Close()
		if s.waker != nil {
			s.Shared.Sweeper.Remove(s.waker)
		}
		return err
	})
}

// Driver returns the session's connection driver (tests, diagnostics).
func (s *session) Driver() *levconn.Driver { return s.d }

// Run implements simclient.Session.
func (s *session) Run(ctx context.Context, due time.Time) error {
	s.watch(ctx)
	defer s.unwatch()
	return s.Play(ctx, due, s)
}

// watch makes ctx's end cancel the driver's reads, until unwatch: through
// the run's set for ctx, one context.AfterFunc for all its clients, where
// the driver made one at every read that blocked.
func (s *session) watch(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	s.cset = s.Shared.Cancels(ctx)
	s.cset.Add(s.d, &s.cslot)
	s.d.CancelledBy(ctx)
}

// unwatch ends watch's.
func (s *session) unwatch() {
	if s.cset != nil {
		s.cset.Remove(&s.cslot)
		s.d.CancelledByNone()
		s.cset = nil
	}
}

// reqFail is a failed request (simclient.RequestError); Reason names it in the metrics.
type reqFail = simclient.RequestError

// Step implements simclient.Stepper.
func (s *session) Step(ctx context.Context, i int, st *scenario.Step) error {
	if s.closed {
		return s.Fail(i, st, simclient.ReasonClosed, errors.New("the connection was closed earlier in the flow"))
	}
	intended := s.Next
	var sent time.Time
	var err error
	switch st.Kind {
	case stepkit.Connect:
		sent, err = s.connect(ctx, st, intended)
	case JoinServer:
		s.seated = true // even when refused or unanswered: the server may hold the player
		sent, err = s.joinServer(ctx, st, intended)
	case JoinGame:
		s.seated = true
		sent, err = s.joinGame(ctx, st, intended)
	case Echo:
		return s.echoes(ctx, i, st)
	case Status:
		sent, err = s.status(ctx, st, intended)
	case stepkit.Disconnect:
		sent, err = s.closeConn(ctx, st)
	case scenario.Malformed:
		s.robust = true
		return s.malformed(s.Stop, i, st)
	case scenario.RateProbe:
		s.robust = true
		return s.rateProbe(s.Stop, i, st)
	default:
		return s.Fail(i, st, simclient.ReasonSocket, fmt.Errorf("step %q is not supported by the leviathan client", st.Kind))
	}
	return s.Finish(i, st, intended, sent, err)
}

// verdict is what a reply matcher decides about one message.
type verdict uint8

const (
	skip   verdict = iota // not for this request (unsolicited, another reply)
	accept                // the request is answered
	refuse                // answered with a refusal (err set)
)

// request sends a Critical request of type t and runs the connection until
// match accepts or refuses a message, the step's timeout passes or ctx
// ends. It records the request's latency under its message key.
func (s *session) request(ctx context.Context, timeout time.Duration, t lv.RequestType, payload []byte,
	intended time.Time, match func(num uint32, m *lv.Message) (verdict, error)) (time.Time, error) {
	sent := time.Now()
	num, err := s.d.SendRequest(levconn.Critical, t, payload)
	if err != nil {
		if levconn.IsRefused(err) {
			return sent, &reqFail{Reason: result.ReasonConnRefused, Err: err}
		}
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	key := s.rt.req[int(t)%len(s.rt.req)]
	deadline := sent.Add(timeout)
	for {
		m, err := s.next1(ctx, deadline)
		if err != nil {
			simclient.EndRequest(s.Rec, key, reasonOf(ctx, err), sent, timeout, time.Now())
			return sent, &reqFail{Reason: reasonOf(ctx, err), Err: fmt.Errorf("%v: %w", t, err)}
		}
		v, ferr := match(num, m)
		switch v {
		case accept:
			s.Rec.Record(key, intended, sent, s.replyAt())
			return sent, nil
		case refuse:
			s.Rec.Fail(key, reasonOfRefusal(ferr), time.Now())
			return sent, ferr
		}
	}
}

func reasonOf(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return simclient.ReasonCancelled
	case errors.Is(err, levconn.ErrTimeout):
		return result.ReasonTimeout
	case errors.Is(err, errServerClosed):
		return simclient.ReasonClosed
	case levconn.IsRefused(err):
		return result.ReasonConnRefused
	}
	return simclient.ReasonSocket
}

func reasonOfRefusal(err error) string {
	var rf *reqFail
	if errors.As(err, &rf) {
		return rf.Reason
	}
	return result.ReasonViolation
}

var (
	errServerClosed = errors.New("the server sent CloseConnection")
	errConfirmed    = errors.New("awaited message confirmed")
)

// next1 runs the connection until the server sends a new message and
// returns it, handling engine events (resends, duplicates, acks) and the
// server's own messages (its Connect request, Keepalive, CloseConnection)
// on the way.
func (s *session) next1(ctx context.Context, deadline time.Time) (*lv.Message, error) {
	for {
		e, err := s.d.Next(ctx, deadline)
		if err != nil {
			return nil, err
		}
		switch e.Kind {
		case levconn.EventResent:
			if e.MsgKind == lv.KindRequest {
				s.Rec.Retry(s.rt.req[int(e.Type)%len(s.rt.req)])
			}
		case levconn.EventDuplicate, levconn.EventAckReading:
			s.engineEvent(&e)
		case levconn.EventConfirmed:
			s.engineEvent(&e)
			if s.await != 0 && e.Number == s.await && e.MsgKind == lv.KindResponse {
				return nil, errConfirmed
			}
		case levconn.EventClosed:
			s.closed = true
			return nil, errServerClosed
		case levconn.EventMessage:
			m := &e.Msg
			if m.Kind == lv.KindRequest && m.RequestType() == lv.ReqConnect {
				// The server's own Connect: the engine's client answers it.
				s.d.SendResponse(levconn.Critical, lv.ResConnect, m.Number, lv.Connect{CheckValue: lv.CheckValue}.Append(s.buf[:0]))
				continue
			}
			if m.Kind == lv.KindResponse {
				switch m.ResponseType() {
				case lv.ResKeepalive:
					continue
				case lv.ResCloseConnection:
					s.closed, s.serverBye = true, true
					return nil, errServerClosed
				}
			}
			return m, nil
		}
	}
}

// engineEvent records what the engine reports besides messages, resends
// and closing: a duplicate suppressed, a request's ack latency, an ack
// field that fits only the other ack-bit reading.
func (s *session) engineEvent(e *levconn.Event) {
	now := time.Now()
	switch e.Kind {
	case levconn.EventDuplicate:
		s.Rec.Record(s.rt.dup, now, now, now)
	case levconn.EventConfirmed:
		if !e.ByResponse && e.MsgKind == lv.KindRequest {
			s.Rec.Record(s.rt.ack, now.Add(-e.AckRTT), now.Add(-e.AckRTT), now)
		}
	case levconn.EventAckReading:
		s.Rec.Violation(RuleAckReading, now, nil, nil, e.Detail)
	}
}

// bad records a reply m that broke rule. usable says whether the flow can
// still read what it needs from it: simclient.ReplyViolation decides, with
// the scenario's on_violation, whether the flow carries on (accept, nil)
// or the request fails (refuse and the failure).
func (s *session) bad(usable bool, rule string, m *lv.Message, format string, a ...any) (verdict, error) {
	if e := s.Shared.ReplyViolation(s.Rec, rule, lv.AppendMessage(nil, m), nil, fmt.Sprintf(format, a...), usable); e != nil {
		return refuse, e
	}
	return accept, nil
}

// answers checks that m is a response of type want to num.
func (s *session) answers(num uint32, m *lv.Message, want ...lv.ResponseType) (verdict, error) {
	if m.Kind != lv.KindResponse {
		return skip, nil
	}
	ok := false
	for _, w := range want {
		ok = ok || m.ResponseType() == w
	}
	if !ok {
		if m.ResponseTo == num {
			return s.bad(false, RuleReplyType, m, "request #%d answered by %v", num, m.ResponseType())
		}
		return skip, nil
	}
	if m.ResponseTo != num {
		return s.bad(true, RuleResponseTo, m, "%v has ResponseTo %d, want %d", m.ResponseType(), m.ResponseTo, num)
	}
	return accept, nil
}

func (s *session) connect(ctx context.Context, st *scenario.Step, intended time.Time) (time.Time, error) {
	name := stepkit.NameOf(st)
	if name == "" {
		name = "player"
	}
	first, err := s.request(ctx, st.Policy.Timeout, lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(s.buf[:0]), intended,
		func(num uint32, m *lv.Message) (verdict, error) {
			v, err := s.answers(num, m, lv.ResConnect)
			if v == accept {
				var p lv.Connect
				if e := p.Decode(m.Payload); e != nil || p.CheckValue != lv.CheckValue {
					return s.bad(e == nil, RuleCheckValue, m, "Connect reply CheckValue %d (%v)", p.CheckValue, e)
				}
			}
			return v, err
		})
	if err != nil {
		return first, err
	}
	if _, err := s.request(ctx, st.Policy.Timeout, lv.ReqSecurity, lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(s.buf[:0]), time.Now(),
		func(num uint32, m *lv.Message) (verdict, error) { return s.answers(num, m, lv.ResSecurity) }); err != nil {
		return first, err
	}
	_, err = s.request(ctx, st.Policy.Timeout, lv.ReqAuthenticate, lv.AuthenticateRequest{UserName: []byte(name)}.Append(s.buf[:0]), time.Now(),
		func(num uint32, m *lv.Message) (verdict, error) { return s.answers(num, m, lv.ResAuthenticate) })
	return first, err
}

func (s *session) joinServer(ctx context.Context, st *scenario.Step, intended time.Time) (time.Time, error) {
	return s.request(ctx, st.Policy.Timeout, lv.ReqJoinServer, lv.JoinServer{MasterServerToken: lv.ClientMasterServerToken}.Append(s.buf[:0]), intended,
		func(num uint32, m *lv.Message) (verdict, error) {
			v, err := s.answers(num, m, lv.ResServerAllow, lv.ResServerDisallow)
			if v != accept {
				return v, err
			}
			return s.allowOrDeny(lv.ReqJoinServer, m, lv.AcceptConnectAccepted)
		})
}

// allowOrDeny judges a ServerAllow/ServerDisallow answer to req.
func (s *session) allowOrDeny(req lv.RequestType, m *lv.Message, want lv.AcceptedType) (verdict, error) {
	if m.ResponseType() == lv.ResServerDisallow {
		var p lv.ServerDisallow
		if err := p.Decode(m.Payload); err != nil {
			return s.bad(false, string(lv.RulePayload), m, "%v", err)
		}
		return refuse, &reqFail{Reason: result.ReasonJoinDeny, Err: disallowRefusal(req, &p)}
	}
	var p lv.ServerAllow
	if err := p.Decode(m.Payload); err != nil {
		return s.bad(false, string(lv.RulePayload), m, "%v", err)
	}
	if p.Accepted != want {
		if v, err := s.bad(true, RuleReplyType, m, "ServerAllow AcceptedType %v, want %v", p.Accepted, want); v != accept {
			return v, err
		}
	}
	if want == lv.AcceptConnectAccepted {
		if id, ok := p.PlayerID(); ok {
			s.player = id
		}
	}
	return accept, nil
}

func (s *session) joinGame(ctx context.Context, st *scenario.Step, intended time.Time) (time.Time, error) {
	allowed, world := false, false
	return s.request(ctx, st.Policy.Timeout, lv.ReqJoinGame, lv.JoinGame{Options: []byte(joinGameOptions(st))}.Append(s.buf[:0]), intended,
		func(num uint32, m *lv.Message) (verdict, error) {
			if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResStartWorldReceive {
				if m.ResponseTo != 0 && m.ResponseTo != num {
					if v, err := s.bad(true, RuleResponseTo, m, "StartWorldReceive ResponseTo %d, want 0 or %d", m.ResponseTo, num); v != accept {
						return v, err
					}
				}
				world = true
			} else {
				v, err := s.answers(num, m, lv.ResServerAllow, lv.ResServerDisallow)
				if v != accept {
					return v, err
				}
				if v, err := s.allowOrDeny(lv.ReqJoinGame, m, lv.AcceptDone); v != accept {
					return v, err
				}
				allowed = true
			}
			if allowed && world {
				return accept, nil
			}
			return skip, nil
		})
}

// echoes sends the step's Count Echo requests Interval apart (stepkit.Series) on a fixed
// schedule (back to back, each due when the previous was answered, with
// interval 0: simclient.SeriesIntended); each is answered by a Response
// None (ResponseTo 0).
func (s *session) echoes(ctx context.Context, i int, st *scenario.Step) error {
	key := s.StepKey(i)
	start := s.Next
	ser := stepkit.SeriesOf(st)
	count := max(ser.Count, 1)
	for k := 0; k < count; k++ {
		intended := simclient.SeriesIntended(start, s.Next, k, ser.Interval)
		if k > 0 && s.Stop.Err() != nil {
			// The stop signal: a back-to-back series has no pause to end.
			return s.Fail(i, st, simclient.ReasonCancelled, s.Stop.Err())
		}
		if k > 0 && ser.Interval > 0 {
			if err := s.SleepUntil(s.Stop, i, st, intended); err != nil {
				return err
			}
		}
		sent, err := s.request(ctx, st.Policy.Timeout, lv.ReqEcho, nil, intended,
			func(num uint32, m *lv.Message) (verdict, error) {
				if m.Kind != lv.KindResponse || m.ResponseType() != lv.ResNone {
					return skip, nil
				}
				if m.ResponseTo != 0 && m.ResponseTo != num {
					return s.bad(true, RuleResponseTo, m, "Echo answered with ResponseTo %d, want 0", m.ResponseTo)
				}
				return accept, nil
			})
		if err != nil {
			return s.StepErr(i, st, err)
		}
		now := s.replyAt()
		// s.Next is the previous reply: a slow one delays this echo, and
		// that wait is the server's, not the harness's send lag.
		s.Rec.RecordReady(key, intended, s.Next, sent, now)
		s.Next = now
	}
	return nil
}

func (s *session) status(ctx context.Context, st *scenario.Step, intended time.Time) (time.Time, error) {
	return s.request(ctx, st.Policy.Timeout, lv.ReqServerstatus, nil, intended,
		func(num uint32, m *lv.Message) (verdict, error) {
			v, err := s.answers(num, m, lv.ResServerStatus)
			if v == accept {
				var p lv.ServerStatus
				if e := p.Decode(m.Payload); e != nil {
					return s.bad(false, string(lv.RulePayload), m, "%v", e)
				}
			}
			return v, err
		})
}

// closeConn sends CloseConnection, Critical, and waits (within the step's
// timeout) for the server to ack it before closing the socket, so that the
// server releases the player even when the datagram is lost. (The engine's
// own client never manages to send it; see leviathan.md.)
func (s *session) closeConn(ctx context.Context, st *scenario.Step) (time.Time, error) {
	sent := time.Now()
	num, err := s.d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil)
	if err != nil {
		s.closed = true
		s.d.Close()
		return sent, &reqFail{Reason: simclient.ReasonSocket, Err: err}
	}
	s.await = num
	timeout := st.Policy.Timeout
	if timeout <= 0 { // close takes no request keys
		timeout = scenario.DefaultPolicy.Timeout
	}
	deadline := sent.Add(timeout)
	for {
		_, err = s.next1(ctx, deadline)
		if err != nil {
			break
		}
	}
	s.await = 0
	s.closed = true
	s.d.Close()
	if errors.Is(err, errConfirmed) {
		s.Rec.Record(s.rt.closeKey, sent, sent, time.Now())
		return sent, nil
	}
	simclient.EndRequest(s.Rec, s.rt.closeKey, reasonOf(ctx, err), sent, timeout, time.Now())
	return sent, &reqFail{Reason: reasonOf(ctx, err), Err: fmt.Errorf("CloseConnection not acked: %w", err)}
}

// replyAt is when the reply Next last returned reached this host
// (simclient.Shared.ReplyAt).
func (s *session) replyAt() time.Time { return s.Shared.ReplyAt(s.d.KernelStamps(), s.d.Stamp()) }
