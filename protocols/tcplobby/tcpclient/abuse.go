package tcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
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
				s.violation(simclient.RuleTMalformedAns, frame, nil, fmt.Sprintf("%s frame: %s within %s", kinds[kind], why, spec.Silence))
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
	key := s.StepKey(i)
	msgKey := s.rt.keys[tcpwire.TypeListRoomsReq]
	timeout := st.Policy.Timeout
	start := time.Now()
	pr := simclient.NewProbe(st.Probe, start)
	total := pr.Total()
	type out struct{ intended, sent time.Time }
	var q []out
	head := 0
	frame := tcpwire.AppendFrame(nil, &tcpwire.ListRoomsReq{})
	s.pend = tcpwire.TypeListRoomsAck
	defer func() { s.pend = 0 }()
	closed := false
	read := func(until time.Time) error {
		for head < len(q) || !until.IsZero() {
			wait := until
			if head < len(q) {
				if exp := q[head].sent.Add(timeout); wait.IsZero() || exp.Before(wait) {
					wait = exp
				}
			}
			if closed {
				for ; head < len(q); head++ {
					pr.Outcome(q[head].intended.Sub(start), simclient.Lost)
				}
				return nil
			}
			s.done, s.refusal = false, nil
			p, err := s.fc.next(wait)
			now := time.Now()
			switch {
			case err == nil:
				s.handle(p)
				switch {
				case s.done && head < len(q):
					s.Rec.Record(key, q[head].intended, q[head].sent, now)
					s.Rec.Record(msgKey, q[head].intended, q[head].sent, now)
					pr.Outcome(q[head].intended.Sub(start), simclient.Answered)
					head++
				case s.refusal != nil && head < len(q):
					pr.Outcome(q[head].intended.Sub(start), simclient.Refused)
					head++
				}
			case errors.Is(err, errTimeout):
				for ; head < len(q) && !now.Before(q[head].sent.Add(timeout)); head++ {
					pr.Outcome(q[head].intended.Sub(start), simclient.Lost)
				}
				if !until.IsZero() && !now.Before(until) {
					return nil
				}
			case errors.Is(err, errCancelled):
				return err
			default:
				s.readFailed(err)
				closed = true
			}
		}
		return nil
	}
	cut := false
	for k := 0; k < total; k++ {
		due := start.Add(pr.At(k))
		if err := read(due); err != nil || ctx.Err() != nil {
			cut = true
			break
		}
		if closed {
			pr.Outcome(due.Sub(start), simclient.Lost)
			continue
		}
		sent := time.Now()
		if _, err := s.fc.c.Write(frame); err != nil {
			closed = true
			pr.Outcome(due.Sub(start), simclient.Lost)
			continue
		}
		s.io.Sent(len(frame))
		q = append(q, out{intended: due, sent: sent})
	}
	if !cut && read(time.Time{}) != nil {
		cut = true
	}
	s.Shared.ReportProbe(pr, st.Label, s.fc.c.LocalAddr().String(), start, cut)
	s.Next = time.Now()
	if closed {
		s.closedBy = io.EOF
	}
	if cut {
		return s.Fail(i, st, simclient.ReasonCancelled, context.Canceled)
	}
	return nil
}
