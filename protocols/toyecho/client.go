package toyecho

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// RulePayload is broken by a reply whose payload is not the request's.
const RulePayload = "TOY-PAYLOAD"

// rules are the rules a toy-echo run reports.
var rules = []simclient.RuleInfo{{ID: RulePayload, Section: "toy-echo.md §1", Summary: "a reply's payload is not its request's"}}

// reach checks a toy echo server: a request must draw a reply.
func reach(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) (scenario.Options, error) {
	r := simclient.DatagramReach{
		What:    "a toy-echo request",
		Packets: func(int) [][]byte { return [][]byte{appendRequest(nil, 0xFFFE, []byte("reach"))} },
		Judge: func(b []byte) (bool, error) {
			_, _, ok := parse(b, replyMagic)
			return ok, nil
		},
	}
	return nil, r.Run(ctx, addr, timeout)
}

// session is one simulated toy client, on a connected UDP socket.
type session struct {
	simclient.Base
	c       *net.UDPConn
	payload []byte
	seq     uint16
	out     []byte
	buf     []byte
}

// newSession is the toy's simclient.Factory.
func newSession(sh *simclient.Shared, id int, flow *scenario.Flow, src netip.Addr) (simclient.Session, error) {
	s := &session{}
	if err := s.Begin(sh, id, flow); err != nil {
		return nil, err
	}
	var local *net.UDPAddr
	if src.IsValid() {
		local = &net.UDPAddr{IP: src.AsSlice()}
	}
	target := netip.AddrPortFrom(sh.Target.Addr().Unmap(), sh.Target.Port())
	c, err := net.DialUDP("udp", local, net.UDPAddrFromAddrPort(target))
	if err != nil {
		return nil, simclient.OpenError(err)
	}
	o, _ := sh.Plan.Options.(Options)
	s.c, s.payload, s.buf = c, []byte(o.Payload), make([]byte, 2048)
	s.Join()
	return s, nil
}

// Run implements simclient.Session.
func (s *session) Run(ctx context.Context, due time.Time) error { return s.Play(ctx, due, s) }

// Close implements simclient.Session.
func (s *session) Close() error { return s.CloseOnce(s.c.Close) }

// Step implements simclient.Stepper: the toy's step kinds, echo and say.
func (s *session) Step(ctx context.Context, i int, st *scenario.Step) error {
	switch st.Kind {
	case Echo:
		return s.echoes(ctx, i, st)
	case Say:
		p, _ := st.Params.(SayParams)
		intended := s.Next
		sent, err := s.echo(ctx, st.Policy.Timeout, []byte(p.Text))
		return s.Finish(i, st, intended, sent, err)
	}
	return s.Fail(i, st, simclient.ReasonSocket, fmt.Errorf("step %q is not supported by the %s client", st.Kind, Name))
}

// echoes plays an echo step: its series of requests carrying the
// scenario's payload (stepkit.Series).
func (s *session) echoes(ctx context.Context, i int, st *scenario.Step) error {
	key := s.StepKey(i)
	start := s.Next
	ser := stepkit.SeriesOf(st)
	for k := 0; k < max(ser.Count, 1); k++ {
		intended := simclient.SeriesIntended(start, s.Next, k, ser.Interval)
		if k > 0 && s.Stop.Err() != nil {
			return s.Fail(i, st, simclient.ReasonCancelled, s.Stop.Err())
		}
		if k > 0 && ser.Interval > 0 {
			if err := s.SleepUntil(s.Stop, i, st, intended); err != nil {
				return err
			}
		}
		sent, err := s.echo(ctx, st.Policy.Timeout, s.payload)
		if err != nil {
			return s.StepErr(i, st, err)
		}
		now := time.Now()
		s.Rec.RecordReady(key, intended, s.Next, sent, now)
		s.Next = now
	}
	return nil
}

// echo sends one request carrying payload and waits up to timeout for its
// reply, counting a reply with another payload as a violation (the reply
// still answers).
func (s *session) echo(ctx context.Context, timeout time.Duration, payload []byte) (sent time.Time, err error) {
	s.seq++
	s.out = appendRequest(s.out[:0], s.seq, payload)
	sent = time.Now()
	if _, err := s.c.Write(s.out); err != nil {
		return sent, &simclient.RequestError{Reason: reasonOf(err), Err: err}
	}
	stop := context.AfterFunc(ctx, func() { s.c.SetReadDeadline(time.Now()) })
	defer stop()
	s.c.SetReadDeadline(sent.Add(timeout))
	for {
		n, err := s.c.Read(s.buf)
		if err != nil {
			if ctx.Err() != nil {
				return sent, simclient.ErrCancelled
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				return sent, &simclient.RequestError{Reason: result.ReasonConnRefused, Err: err}
			}
			return sent, &simclient.RequestError{Reason: result.ReasonTimeout, Err: fmt.Errorf("no reply within %v", timeout)}
		}
		seq, got, ok := parse(s.buf[:n], replyMagic)
		if !ok || seq != s.seq {
			continue // not this request's reply
		}
		if !bytes.Equal(got, payload) {
			s.Rec.Violation(RulePayload, time.Now(), s.buf[:n], s.out, fmt.Sprintf("payload %q, want %q", got, payload))
		}
		return sent, nil
	}
}

func reasonOf(err error) string {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return result.ReasonConnRefused
	}
	return simclient.ReasonSocket
}
