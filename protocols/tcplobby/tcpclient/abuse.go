package tcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	lbscript "github.com/lobbybench/lobbybench/script"
	"github.com/lobbybench/lobbybench/simclient"
)

// malformedFrame builds a broken frame of kind.
func (s *session) malformedFrame(kind scenario.MalformedKind) []byte {
	switch kind {
	case scenario.WrongLength:
		// A LIST_ROOMS_REQ whose frame carries two bytes too many: the
		// size does not match the type (T-SIZE-FIXED).
		return []byte{3, 0, 0, 0, byte(tcpwire.TypeListRoomsReq), 0, 0}
	case scenario.UnknownType:
		return []byte{1, 0, 0, 0, 0x7E}
	}
	n := 5 + s.Think.IntN(64)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(s.Think.Uint32())
	}
	return b
}

// probeConn opens a fresh connection for one malformed datagram or liveness check.
func (s *session) probeConn(timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if s.src.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: s.src.AsSlice()}
	}
	return d.Dial("tcp", s.dst.String())
}

// answeredWithError reports whether the server answered ERROR_MSG and then
// closed the connection within window.
func answeredWithError(c net.Conn, window time.Duration) (bool, string) {
	_ = c.SetReadDeadline(time.Now().Add(window))
	fr := tcpwire.NewFrameReader(c, 0)
	sawError := false
	for {
		p, err := fr.Next()
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err):
				if sawError {
					return true, ""
				}
				return false, "the server closed without ERROR_MSG"
			case isTimeout(err):
				if sawError {
					return false, "ERROR_MSG but the connection stayed open"
				}
				return false, "neither ERROR_MSG nor a close"
			}
			return false, err.Error()
		}
		if len(p) > 0 && tcpwire.Type(p[0]) == tcpwire.TypeErrorMsg {
			sawError = true
		} else if len(p) > 0 {
			return false, fmt.Sprintf("answered %v", tcpwire.Type(p[0]))
		}
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// listOn sends LIST_ROOMS_REQ on c and waits for LIST_ROOMS_ACK.
func listOn(c net.Conn, timeout time.Duration) error {
	if _, err := c.Write(tcpwire.AppendFrame(nil, &tcpwire.ListRoomsReq{})); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	fr := tcpwire.NewFrameReader(c, 0)
	for {
		p, err := fr.Next()
		if err != nil {
			return err
		}
		if len(p) > 0 && tcpwire.Type(p[0]) == tcpwire.TypeListRoomsAck {
			var m tcpwire.ListRoomsAck
			return m.DecodeOpts(p, tcpwire.Options{})
		}
	}
}

// malformed runs a malformed step: one fresh connection per packet.
func (s *session) malformed(ctx context.Context, i int, st *scenario.Step) error {
	spec := st.Malformed
	key := s.StepKey(i)
	msgKey := s.rt.keys[tcpwire.TypeListRoomsReq]
	pol := s.Shared.Plan.Defaults // malformed steps take no request keys
	kinds := spec.Kinds
	if len(kinds) == 0 {
		kinds = scenario.MalformedKinds(tcpwire.ProtocolName)
	}
	sentBy := make([]int64, len(kinds))
	unexp := make([]int64, len(kinds))
	valid := func(intended time.Time) {
		sent := time.Now()
		c, err := s.probeConn(pol.Timeout)
		if err == nil {
			err = listOn(c, pol.Timeout)
			c.Close()
		}
		now := time.Now()
		if err != nil {
			reason := connReason(err)
			if isTimeout(err) {
				reason = result.ReasonTimeout
			}
			s.Rec.Fail(key, reason, now)
			s.Rec.Fail(msgKey, reason, now)
			return
		}
		s.Rec.Record(key, intended, sent, now)
		s.Rec.Record(msgKey, intended, sent, now)
	}
	base := s.Next
	for k := 0; k < st.Malformed.Count; k++ {
		due := base.Add(time.Duration(k) * st.Malformed.Interval)
		if err := s.SleepUntil(ctx, i, st, due); err != nil {
			return err
		}
		if s.Think.Float64() >= spec.Share {
			valid(due)
			continue
		}
		kind := s.Think.IntN(len(kinds))
		sentBy[kind]++
		c, err := s.probeConn(pol.Timeout)
		if err != nil {
			s.Rec.Fail(key, connReason(err), time.Now())
			unexp[kind]++
			continue
		}
		frame := s.malformedFrame(kinds[kind])
		if _, err := c.Write(frame); err == nil {
			s.io.Sent(len(frame))
			if ok, why := answeredWithError(c, spec.Silence); !ok {
				unexp[kind]++
				s.violation(RuleTMalformedAns, frame, nil, fmt.Sprintf("%s frame: %s within %s", kinds[kind], why, spec.Silence))
			}
		}
		c.Close()
	}
	// Liveness: a fresh connection must still be served.
	kept := int64(0)
	c, err := s.probeConn(pol.Timeout)
	if err == nil {
		if listOn(c, pol.Timeout) == nil {
			kept = 1
		}
		c.Close()
	}
	for k, kind := range kinds {
		if sentBy[k] > 0 {
			s.Shared.Collector.AddMalformed(string(kind), sentBy[k], unexp[k], 1, kept)
		}
	}
	s.Next = time.Now()
	return nil
}

// rateProbe ramps LIST_ROOMS_REQ on the session's connection, pipelined:
// replies come back in order, so each LIST_ROOMS_ACK (or ERROR_MSG)
// resolves the oldest outstanding request.
func (s *session) rateProbe(ctx context.Context, i int, st *scenario.Step) error {
	if err := s.connect(st.Policy.Timeout); err != nil {
		return s.StepErr(i, st, err)
	}
	start := time.Now()
	r := &probeRun{s: s, key: s.StepKey(i), msgKey: s.rt.keys[tcpwire.TypeListRoomsReq],
		timeout: st.Policy.Timeout, start: start, pr: simclient.NewProbe(st.Probe, start)}
	total := r.pr.Total()
	frame := tcpwire.AppendFrame(nil, &tcpwire.ListRoomsReq{})
	s.pend = tcpwire.TypeListRoomsAck
	defer func() { s.pend = 0 }()
	if p := st.Probe.Script; p != nil {
		var err error
		if frame, err = r.scripted(ctx, p, start); err != nil {
			return s.StepErr(i, st, err)
		}
	}
	cut := false
	for k := 0; k < total; k++ {
		due := start.Add(r.pr.At(k))
		if err := r.read(due); err != nil || ctx.Err() != nil {
			cut = true
			break
		}
		r.send(due, frame)
	}
	if !cut && r.read(time.Time{}) != nil {
		cut = true
	}
	s.Shared.ReportProbe(r.pr, st.Label, s.fc.c.LocalAddr().String(), start, cut)
	if probeHeld != nil {
		probeHeld(r.q.Held())
	}
	s.Next = time.Now()
	if r.closed {
		s.closedBy = io.EOF
	}
	if cut {
		return s.Fail(i, st, simclient.ReasonCancelled, context.Canceled)
	}
	return nil
}

// scripted readies r for a request written as a script (send:, expect:):
// the frame its send makes, sent as many times as the probe sends, its
// message's metrics key, and its expect as the judge of a reply. The
// pending reply type is the expect's first message, so that the answer
// the flow reads is not a reply of the wrong type.
func (r *probeRun) scripted(ctx context.Context, p *lbscript.Pipelined, start time.Time) ([]byte, error) {
	s := r.s
	env, err := s.ScriptEnv(ctx)
	if err != nil {
		return nil, err
	}
	payload, err := p.Make(env, start)
	if err != nil {
		return nil, err
	}
	r.msgKey = s.Shared.MessageKey(p.Message())
	r.accept = func(b []byte) bool { return p.Accepts(env, env.Catalog.Decode(env.Session, "", b)) }
	s.pend = 0
	if len(p.Expect.Messages) > 0 {
		s.pend, _ = tcpwire.TypeNamed(p.Expect.Messages[0].S)
	}
	return tcpscript.Frame(payload), nil
}

// probeHeld, when set (tests), hears how many requests a probe's queue
// had room for when it ended.
var probeHeld func(int)

// probeRun is a rate_probe step's requests under way, answered in order.
type probeRun struct {
	s           *session
	key, msgKey metrics.Key
	timeout     time.Duration
	start       time.Time
	pr          *simclient.Probe
	q           simclient.ProbeQueue // the requests awaited
	closed      bool                 // the connection failed: the rest is lost
	// accept, when set, judges whether a frame answers the oldest
	// request (a scripted request's expect): one it does not accept
	// refuses it when the flow took it as the answer or a refusal.
	accept func(p []byte) bool
}

// send writes one request due at due, or counts it lost when the
// connection is closed or the write fails (which closes it).
func (r *probeRun) send(due time.Time, frame []byte) {
	if r.closed {
		r.pr.Outcome(due.Sub(r.start), simclient.Lost)
		return
	}
	sent := time.Now()
	if _, err := r.s.fc.c.Write(frame); err != nil {
		r.closed = true
		r.pr.Outcome(due.Sub(r.start), simclient.Lost)
		return
	}
	r.s.io.Sent(len(frame))
	r.q.Add(simclient.ProbeFlight{Intended: due, Sent: sent})
}

// lost counts request f lost.
func (r *probeRun) lost(f simclient.ProbeFlight) {
	r.pr.Outcome(f.Intended.Sub(r.start), simclient.Lost)
}

// read reads answers until until (zero: until none is awaited), counting
// the requests a timeout old as lost; its error is a cancel.
func (r *probeRun) read(until time.Time) error {
	s := r.s
	for {
		wait := until
		oldest, awaited := r.q.Oldest()
		if !awaited && until.IsZero() {
			return nil
		}
		if awaited {
			if exp := oldest.Sent.Add(r.timeout); wait.IsZero() || exp.Before(wait) {
				wait = exp
			}
		}
		if r.closed {
			r.q.Clear(r.lost)
			return nil
		}
		s.done, s.refusal = false, nil
		p, err := s.fc.next(wait)
		now := time.Now()
		switch {
		case err == nil:
			r.answer(p, now)
		case errors.Is(err, errTimeout):
			r.q.Expire(now, r.timeout, r.lost)
			if !until.IsZero() && !now.Before(until) {
				return nil
			}
		case errors.Is(err, errCancelled):
			return err
		default:
			s.readFailed(err)
			r.closed = true
		}
	}
}

// answer hands frame p to the flow and, when it answered or refused the
// oldest request awaited, counts that request so.
func (r *probeRun) answer(p []byte, now time.Time) {
	s := r.s
	s.handle(p)
	o, awaited := r.q.Oldest()
	if !awaited {
		return
	}
	ok, resolves := s.done, s.done || s.refusal != nil
	if r.accept != nil {
		ok = r.accept(p)
		resolves = resolves || ok
	}
	switch {
	case ok:
		s.Rec.Record(r.key, o.Intended, o.Sent, now)
		s.Rec.Record(r.msgKey, o.Intended, o.Sent, now)
		r.pr.Outcome(o.Intended.Sub(r.start), simclient.Answered)
		r.q.Take()
	case resolves:
		if len(p) > 0 {
			r.pr.NoteRefusal(tcpwire.Type(p[0]).String(), p)
		}
		r.pr.Outcome(o.Intended.Sub(r.start), simclient.Refused)
		r.q.Take()
	}
}
