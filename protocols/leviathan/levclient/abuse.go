package levclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	lbscript "github.com/lobbybench/lobbybench/script"
	"github.com/lobbybench/lobbybench/simclient"
)

// RuleMalformedAnswer: the server answered a malformed datagram with a
// message instead of dropping it.
const RuleMalformedAnswer = "L-MALFORMED-REPLY"

var defaultKinds = []scenario.MalformedKind{scenario.Truncated, scenario.UnknownType, scenario.RandomBytes}

// badPacket builds a malformed datagram of kind k. None of them has a
// decodable Ln header, so a conforming server neither answers nor acks
// them.
func (s *session) badPacket(k scenario.MalformedKind) []byte {
	switch k {
	case scenario.Truncated:
		// A valid Echo packet cut inside its Ln header.
		b := lv.AppendNormalHeader(nil, 0x7fff0000+uint32(s.Think.IntN(1<<16)), 0, nil, 1)
		b = lv.AppendRequestHeader(b, 1, lv.ReqEcho)
		return b[:2+s.Think.IntN(8)]
	case scenario.UnknownType:
		// A packet type that is neither Ln nor La.
		b := lv.AppendNormalHeader(nil, 0x7fff0000, 0, nil, 1)
		b = lv.AppendRequestHeader(b, 1, lv.ReqEcho)
		binary.BigEndian.PutUint16(b, 0x4c7a)
		return b
	default: // random, never starting with "L"
		b := make([]byte, 1+s.Think.IntN(64))
		for i := range b {
			b[i] = byte(s.Think.Uint32())
		}
		if b[0] == 0x4c {
			b[0] = 0xff
		}
		return b
	}
}

// malformed sends Count datagrams, Interval apart, a Share of them
// malformed and the rest Echo requests; any message from the server within
// Silence of a malformed one is an unexpected reply (a violation). A final
// Echo checks the connection survived.
func (s *session) malformed(ctx context.Context, i int, st *scenario.Step) error {
	spec := st.Malformed
	kinds := spec.Kinds
	if len(kinds) == 0 {
		kinds = defaultKinds
	}
	type tally struct{ sent, replies int64 }
	per := map[scenario.MalformedKind]*tally{}
	key := s.StepKey(i)
	start := time.Now()
	count := max(st.Malformed.Count, 1)
	for k := 0; k < count; k++ {
		if k > 0 && st.Malformed.Interval > 0 {
			if err := s.SleepUntil(ctx, i, st, start.Add(time.Duration(k)*st.Malformed.Interval)); err != nil {
				return err
			}
		}
		if spec.Share < 1 && s.Think.Float64() >= spec.Share {
			if err := s.echoOnce(ctx, st); err != nil {
				return s.StepErr(i, st, err)
			}
			continue
		}
		kind := kinds[s.Think.IntN(len(kinds))]
		t := per[kind]
		if t == nil {
			t = &tally{}
			per[kind] = t
		}
		b := s.badPacket(kind)
		if err := s.d.WriteRaw(b); err != nil {
			return s.Fail(i, st, simclient.ReasonSocket, err)
		}
		t.sent++
		deadline := time.Now().Add(spec.Silence)
		for {
			m, err := s.next1(ctx, deadline)
			if err != nil {
				if errors.Is(err, levconn.ErrTimeout) {
					break
				}
				return s.Fail(i, st, reasonOf(ctx, err), err)
			}
			t.replies++
			s.Rec.Violation(RuleMalformedAnswer, time.Now(), lv.AppendMessage(nil, m), b,
				fmt.Sprintf("%v within %s of a malformed (%s) datagram", m, spec.Silence, kind))
		}
	}
	kept := int64(0)
	err := s.echoOnce(ctx, st)
	if err == nil {
		kept = 1
	}
	for kind, t := range per {
		s.Shared.Collector.AddMalformed(string(kind), t.sent, t.replies, 1, kept)
	}
	if err != nil {
		return s.StepErr(i, st, err)
	}
	now := time.Now()
	s.Rec.Record(key, start, start, now)
	s.Next = now
	return nil
}

func (s *session) echoOnce(ctx context.Context, st *scenario.Step) error {
	timeout := st.Policy.Timeout
	if timeout <= 0 { // malformed steps take no request keys
		timeout = scenario.DefaultPolicy.Timeout
	}
	_, err := s.request(ctx, timeout, lv.ReqEcho, nil, time.Now(),
		func(num uint32, m *lv.Message) (verdict, error) {
			if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResNone {
				return accept, nil
			}
			return skip, nil
		})
	if err != nil {
		var rf *reqFail
		if !errors.As(err, &rf) {
			err = &reqFail{Reason: result.ReasonTimeout, Err: err}
		}
	}
	return err
}

// rateProbe ramps requests From→To per second over Over and records the
// first one-second window whose share of requests refused or unanswered
// within the step's timeout exceeds Loss (simclient.Probe;
// Collector.AddRateLimit). The requests are sent untracked, so that the
// engine's resends do not hide a loss. The built-in request is Echo,
// answered by the next Response None, in order: the engine's None
// carries ResponseTo 0. A request written as a script (send:, expect:) is
// paired with its reply as probeRun.pair says.
func (s *session) rateProbe(ctx context.Context, i int, st *scenario.Step) error {
	spec := st.Probe
	if spec.Script == nil && spec.Request != "" && spec.Request != Echo {
		return s.Fail(i, st, simclient.ReasonSocket, fmt.Errorf("rate_probe request %q: leviathan probes with echo only", spec.Request))
	}
	timeout := st.Policy.Timeout
	if timeout <= 0 {
		timeout = scenario.DefaultPolicy.Timeout
	}
	r := &probeRun{ctx: ctx, s: s, key: s.StepKey(i), msgKey: s.rt.req[lv.ReqEcho], timeout: timeout}
	if p := spec.Script; p != nil {
		env, err := s.ScriptEnv(ctx)
		if err != nil {
			return s.StepErr(i, st, err)
		}
		r.script, r.env, r.msgKey = p, env, s.Shared.MessageKey(p.Message())
	}
	start := time.Now()
	r.start, r.pr = start, simclient.NewProbe(spec, start)
	ioErr := r.pr.Run(ctx, r, r.pr.Total(), timeout)
	cut := ctx.Err() != nil
	s.Shared.ReportProbe(r.pr, st.Label, s.d.LocalAddr().String(), start, cut)
	if probeHeld != nil {
		probeHeld(r.fl.Held())
	}
	if cut {
		return s.Fail(i, st, simclient.ReasonCancelled, context.Canceled)
	}
	if ioErr != nil {
		return s.Fail(i, st, reasonOf(ctx, ioErr), ioErr)
	}
	s.Next = time.Now()
	return nil
}

// probeHeld, when set (tests), hears how many requests a probe's queue
// had room for when it ended.
var probeHeld func(int)

// probeRun is a rate_probe step's requests under way.
type probeRun struct {
	ctx         context.Context
	s           *session
	key, msgKey metrics.Key
	timeout     time.Duration
	start       time.Time
	pr          *simclient.Probe
	fl          simclient.ProbeQueue // the requests awaited, by MessageNumber
	// script, when set, is the request written as a script: each one
	// made, and a reply judged, through env, the session's script
	// environment, with the flow's captures.
	script *lbscript.Pipelined
	env    *lbscript.Env
	buf    []byte
}

// Expire counts the requests sent a timeout before now as lost.
func (r *probeRun) Expire(now time.Time) {
	r.fl.Expire(now, r.timeout, func(f simclient.ProbeFlight) {
		r.pr.Outcome(f.Intended.Sub(r.start), simclient.Lost)
	})
}

// Recv takes the replies that come before deadline, each answering or
// refusing the request it pairs with.
func (r *probeRun) Recv(deadline time.Time) error {
	for {
		m, err := r.s.next1(r.ctx, deadline)
		if errors.Is(err, levconn.ErrTimeout) {
			return nil
		}
		if err != nil {
			return err
		}
		f, paired, answers := r.pair(m)
		switch {
		case !paired:
		case answers:
			now := time.Now()
			r.s.Rec.Record(r.key, f.Intended, f.Sent, now)
			r.s.Rec.Record(r.msgKey, f.Intended, f.Sent, now)
			r.pr.Outcome(f.Intended.Sub(r.start), simclient.Answered)
		default:
			r.pr.NoteRefusal(levscript.Name(m.Kind, m.Type), r.buf)
			r.pr.Outcome(f.Intended.Sub(r.start), simclient.Refused)
		}
	}
}

// pair finds the request awaited that m replies to, and whether m answers
// it (or refuses it). Only a response replies. The built-in probe's Echo
// is answered by a Response None, which names no request (ResponseTo 0):
// the oldest awaited. A scripted request's reply is the response whose
// ResponseTo is its MessageNumber, judged by the expect (its messages, its
// where); a response with ResponseTo 0 replies to the oldest awaited when
// it is one of the expect's messages (Response None answering an Echo)
// and to none otherwise (StartWorldReceive after a JoinGame's answer).
func (r *probeRun) pair(m *lv.Message) (f simclient.ProbeFlight, paired, answers bool) {
	if m.Kind != lv.KindResponse {
		return f, false, false
	}
	switch {
	case r.script == nil:
		if m.ResponseType() != lv.ResNone {
			return f, false, false
		}
		f, paired = r.fl.Take()
		return f, paired, true
	case m.ResponseTo != 0:
		f, paired = r.fl.TakeID(m.ResponseTo)
	case r.script.Expects(levscript.Name(m.Kind, m.Type)):
		f, paired = r.fl.Take()
	}
	if !paired {
		return f, false, false
	}
	r.buf = lv.AppendMessage(r.buf[:0], m)
	return f, true, r.script.Accepts(r.env, r.env.Catalog.Decode(r.env.Session, "", r.buf))
}

// Oldest is when the oldest request awaited was sent.
func (r *probeRun) Oldest() (time.Time, bool) {
	f, ok := r.fl.Oldest()
	return f.Sent, ok
}

// Send sends the next request, due at due, untracked: a scripted one with
// the connection's next MessageNumber (SyncScript), as the built-in Echo
// takes it.
func (r *probeRun) Send(due time.Time) error {
	var b []byte
	if r.script != nil {
		r.s.SyncScript(r.env.Session)
		var err error
		if b, err = r.script.Make(r.env, due); err != nil {
			return err
		}
	}
	sent := time.Now()
	var num uint32
	var err error
	if b != nil {
		num, err = r.s.d.SendMessage(levconn.None, b)
	} else {
		num, err = r.s.d.SendRequest(levconn.None, lv.ReqEcho, nil)
	}
	if err != nil {
		return err
	}
	r.fl.Add(simclient.ProbeFlight{Intended: due, Sent: sent, ID: num})
	return nil
}
