package simclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
)

// ReasonUnexpected fails a scripted expect that got another message than
// it wanted, or one its where did not hold for.
const ReasonUnexpected = "unexpected"

// Scripter is a protocol's session that plays scripted steps (send,
// expect, if, repeat): it gives the transport over its own socket or
// connection, opening it if need be; Base plays the script through the
// plan's protocol catalog, measures each send and the expect after it as
// a request, and records what a received message broke.
type Scripter interface {
	ScriptTransport(ctx context.Context) (script.Transport, error)
}

// ScriptSyncer is a Scripter whose state the catalog's session must
// follow across the flow's built-in steps (Leviathan's MessageNumbers,
// which its built-in steps take too): before each scripted step Base
// hands it the catalog's session to bring up to date.
type ScriptSyncer interface {
	SyncScript(session any)
}

// ScriptSessioner is a Scripter that makes its scripts' catalog session
// itself, in place of the catalog's NewSession: tcp-lobby's shares the
// client's decoder, so that a client keeps one decoded message of each
// type it receives, not two.
type ScriptSessioner interface {
	ScriptSession() any
}

// ScriptFollower is a Scripter whose own counters must follow the
// catalog's session after each scripted step (udp-lobby's sequence ids,
// which its built-in steps and its scripts take from one counter), so
// that a built-in step after a script does not reuse what the script
// used. ScriptSyncer is the other way round.
type ScriptFollower interface {
	FollowScript(session any)
}

// scriptState is a session's script: its environment, which keeps the
// captures and a send awaiting its expect from one step to the next.
type scriptState struct {
	env  script.Env
	rec  scriptRecorder
	step int // the running step, for think inside if and repeat
	st   *scenario.Step
	// ready: made for this session (scriptReady). A renewed session
	// keeps the state, not ready, and its next scripted step makes it
	// again in place: a 1-step scripted flow in a closed loop used to
	// allocate a state, an environment and a variables map a request.
	ready bool
	// owner is the Base the environment's closures (Intended, Call)
	// were made for: a renewed session on the same one keeps them.
	owner *Base
}

// playScripted runs scripted step i (st) of the flow.
func (b *Base) playScripted(ctx context.Context, i int, st *scenario.Step) error {
	blk, ok := st.Params.(*script.Block)
	sc, ok2 := b.proto.(Scripter)
	if !ok || !ok2 {
		return b.Fail(i, st, ReasonSocket, fmt.Errorf("%s does not play scripted steps", b.Shared.Plan.Protocol))
	}
	if err := b.scriptReady(ctx, sc); err != nil {
		return b.StepErr(i, st, err)
	}
	b.script.step, b.script.st = i, st
	if sy, ok := sc.(ScriptSyncer); ok {
		sy.SyncScript(b.script.env.Session)
	}
	err := script.Run(ctx, blk, &b.script.env)
	if err == script.ErrSuspended {
		// A wait gave up the goroutine (Await, Pause): Resume runs
		// this step again, and the script goes on where it waited.
		return ErrSuspended
	}
	if f, ok := sc.(ScriptFollower); ok {
		f.FollowScript(b.script.env.Session)
	}
	// The step ends when its last expect's message came, as a built-in
	// request's does when its reply came (FinishAt); else now.
	if b.Next = b.script.env.Ended(); b.Next.IsZero() {
		b.Next = time.Now()
	}
	if err == nil {
		return nil
	}
	return b.scriptFailed(ctx, i, st, err)
}

// scriptFailed fails scripted step i (st) for err, Run's: apart from
// playScripted, whose every step would otherwise allocate the Failure
// that errors.As looks for.
// The send the failing expect awaited ends as the step does, under its
// message's key: cut by the end of the run (silent if it had waited
// result.SilentAfter), timed out, or answered with what it did not want.
func (b *Base) scriptFailed(ctx context.Context, i int, st *scenario.Step, err error) error {
	reason := scriptReason(err)
	if ctx.Err() != nil {
		reason = ReasonCancelled
	}
	if reason == "" {
		reason, err = StepFailure(err, ErrCancelled) // the transport's: closed, refused, a socket error
	}
	b.script.rec.endPending(reason)
	return b.Fail(i, st, reason, err)
}

// scriptReady makes the session's script environment on its first
// scripted step: in the state a renewed session kept, else a new one.
func (b *Base) scriptReady(ctx context.Context, sc Scripter) error {
	if b.script != nil && b.script.ready {
		return nil
	}
	tr, err := sc.ScriptTransport(ctx)
	if err != nil {
		return err
	}
	s := b.script
	if s == nil {
		s = &scriptState{}
	}
	kept := s.env
	cat := kept.Catalog // a renewed session's: the same run's protocol
	if cat == nil {
		spec, _ := scenario.LookupProtocol(b.Shared.Plan.Protocol)
		cat = spec.Catalog
	}
	vars := kept.Vars
	if vars == nil {
		vars = make(script.Vars, 0, len(script.Builtins)+captures(b.Flow))
	}
	vars = vars.WithBuiltins(b.Shared.nextScriptSession(), uint64(b.ID), uint64(b.Member.Group.ID), uint64(b.Shared.shard))
	sess := kept.Session
	if r, ok := sess.(script.Renewer); ok {
		r.Renew() // a renewed client's: the same run, the same catalog and options
	} else if ss, ok := sc.(ScriptSessioner); ok {
		sess = ss.ScriptSession()
	} else {
		sess = cat.NewSession(b.Shared.Plan.Options)
	}
	if s.owner != b { // a renewed session on another Base: its own closures
		kept.Intended, kept.Call = func() time.Time { return b.Next }, b.scriptCall
	}
	*s = scriptState{rec: s.rec.renewed(b), ready: true, owner: b}
	s.env = script.Env{
		Catalog: cat, Session: sess, Transport: tr, Vars: vars,
		Intended: kept.Intended, Call: kept.Call, Record: &s.rec, Rand: b.Think,
	}
	b.script = s
	return nil
}

// ScriptEnv is the session's script environment, made as its first
// scripted step makes it, and brought up to date with the built-in steps
// (ScriptSyncer): a built-in step that plays a script's message itself
// (a rate_probe's request written as a script, script.Pipelined) makes
// and judges it through this, with the flow's captures.
func (b *Base) ScriptEnv(ctx context.Context) (*script.Env, error) {
	sc, ok := b.proto.(Scripter)
	if !ok {
		return nil, fmt.Errorf("%s does not play scripted steps", b.Shared.Plan.Protocol)
	}
	if err := b.scriptReady(ctx, sc); err != nil {
		return nil, err
	}
	if sy, ok := sc.(ScriptSyncer); ok {
		sy.SyncScript(b.script.env.Session)
	}
	return &b.script.env, nil
}

// captures counts the captures of flow's scripted steps (Block.Captures).
func captures(flow *scenario.Flow) int {
	n := 0
	for i := range flow.Steps {
		if blk, ok := flow.Steps[i].Params.(*script.Block); ok {
			n += blk.Captures()
		}
	}
	return n
}

// keptScript is the script state a renewed session keeps (Renew), to be
// made again by its first scripted step.
func (b *Base) keptScript() *scriptState {
	if b.script != nil {
		b.script.ready = false
	}
	return b.script
}

// scriptCall plays a step inside an if or a repeat that the script does
// not: a think, which gives up the goroutine as a think step's pause does
// (Pause: script.ErrSuspended, and Resume runs the scripted step again
// once the pause is over, which goes on after the think), or holds it.
func (b *Base) scriptCall(ctx context.Context, v any) error {
	st, ok := v.(scenario.Step)
	if !ok || st.Kind != scenario.Think {
		return fmt.Errorf("a %T inside a scripted step: only think", v)
	}
	at := b.Next.Add(st.Think.Sample(b.Think))
	if b.mayPause(b.Stop, at) {
		b.suspendPause(b.script.step, b.script.st, at, b.script.step)
		return script.ErrSuspended
	}
	if err := SleepUntil(b.Stop, &b.timer, at); err != nil {
		return err
	}
	b.Next = at
	return nil
}

// scriptRecorder records a script's requests and findings on the
// session's recorder: a request under its message's key and the running
// step's, which is the send's for the expect that answers it (an expect
// takes the label of the send before it) and the if's or repeat's for
// the requests inside them.
type scriptRecorder struct {
	b *Base
	// msg is the message of the last request recorded and msgKey its
	// key: a flow's requests mostly repeat one message, whose key
	// Shared.MessageKey finds under a lock every client takes.
	msg    string
	msgKey metrics.Key
}

// renewed is the recorder of a renewed session on b, which keeps the
// message key it found when b is of the same run.
func (r scriptRecorder) renewed(b *Base) scriptRecorder {
	if r.b == nil || r.b.Shared != b.Shared {
		return scriptRecorder{b: b}
	}
	r.b = b
	return r
}

func (r *scriptRecorder) key() metrics.Key { return r.b.StepKey(r.b.script.step) }

func (r *scriptRecorder) Request(q script.Request) {
	if r.msg != q.Key.Message || r.msg == "" {
		r.msg, r.msgKey = q.Key.Message, r.b.Shared.MessageKey(q.Key.Message)
	}
	r.b.Rec.Record(r.key(), q.Intended, q.Sent, q.Received)
	r.b.Rec.Record(r.msgKey, q.Intended, q.Sent, q.Received)
}

func (r *scriptRecorder) Violation(key script.Key, v script.Violation) {
	r.b.Rec.Violation(v.Rule, time.Now(), v.Packet, nil, v.Detail)
}

// MalformedSent and MalformedReply count a scripted malformed send and a
// reply to one in the run's malformed findings, by kind, as the built-in
// malformed step does (a script has no liveness probe of its own).
func (r *scriptRecorder) MalformedSent(kind string) {
	r.b.Shared.Collector.AddMalformed(kind, 1, 0, 0, 0)
}

func (r *scriptRecorder) MalformedReply(kind string) {
	r.b.Shared.Collector.AddMalformed(kind, 0, 1, 0, 0)
}

// Fail records a step that failed and went on (on_fail: continue): as a
// timeout when nothing came, as unexpected when something else did, as
// cut when the end of the run ended its wait, and the send it awaited so
// too.
func (r *scriptRecorder) Fail(label string, err error) {
	reason := scriptReason(err)
	if reason == "" {
		reason, _ = StepFailure(err, ErrCancelled) // the transport's: cut by the end of the run, a socket error
	}
	EndRequest(r.b.Rec, r.key(), reason, time.Time{}, 0, time.Now())
	r.endPending(reason)
}

// endPending records the send no expect answered, if any, as ended for
// reason now under its message's key (EndRequest: cut when the run
// ended), so that a message type's figures count its every send.
func (r *scriptRecorder) endPending(reason string) {
	q, ok := r.b.script.env.TakePending()
	if !ok {
		return
	}
	EndRequest(r.b.Rec, r.b.Shared.MessageKey(q.Key.Message), reason, q.Sent, 0, time.Now())
}

// scriptReason is the reason of a script step's failure err: a timeout
// when nothing came, unexpected when something else did, "" when the
// transport's error ended it.
func scriptReason(err error) string {
	var f *script.Failure
	switch {
	case errors.As(err, &f) && f.Silent:
		return result.ReasonTimeout
	case errors.As(err, &f) && f.Err == nil:
		return ReasonUnexpected
	}
	return ""
}
