package conformance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/script"
)

// ScriptConn is what a user case's steps travel on: the protocol's units
// on the case's own paced, logged sockets (Group.ScriptTransport). A
// transport whose replies open a channel (udp-lobby's instance) is also a
// script.Router.
type ScriptConn interface {
	script.Transport
	Close() error
}

// UserCases makes the cases of a user's case file (conform --cases FILE)
// into cases of its protocol's group, for Config.Extra: each plays its
// steps with script.Run over the group's ScriptTransport. It refuses a
// protocol whose group has no transport for scripts, and an id a
// registered case has.
func UserCases(cf *scenario.CaseFile) ([]*Case, error) {
	name := string(cf.Protocol)
	g, ok := lookupGroup(name)
	if !ok {
		return nil, fmt.Errorf("%s: protocol %s has no conformance group", cf.File, name)
	}
	spec, _ := scenario.LookupProtocol(cf.Protocol)
	if g.ScriptTransport == nil || spec.Catalog == nil {
		why := g.NoScripts
		if why == "" {
			why = "its group plays no scripted steps"
		}
		return nil, fmt.Errorf("%s: %s cannot run a user's own cases: %s", cf.File, name, why)
	}
	var out []*Case
	for i := range cf.Cases {
		cs := &cf.Cases[i]
		regMu.Lock()
		_, clash := registry[cs.ID]
		regMu.Unlock()
		if clash {
			return nil, fmt.Errorf("%s:%d: case id %s is a built-in case's: choose another (conform --list lists them)", cf.File, cs.Line, cs.ID)
		}
		out = append(out, userCase(cf, cs, g, spec.Catalog))
	}
	return out, nil
}

// userLevels maps a case file's levels to the suite's: a MAY informs.
var userLevels = map[string]Level{"MUST": Must, "SHOULD": Should, "MAY": Info}

// CaseFileOptions settles case file cf with opts, the options protocol's
// flags made (Config.Options), by its group's CaseFile: the run's options.
func CaseFileOptions(protocol string, opts any, cf *scenario.CaseFile) (any, error) {
	g, ok := lookupGroup(protocol)
	if !ok || g.CaseFile == nil {
		return opts, nil
	}
	return g.CaseFile(opts, cf)
}

func userCase(cf *scenario.CaseFile, cs *scenario.CaseSpec, g *Group, cat script.Catalog) *Case {
	return &Case{
		ID: cs.ID, Protocol: string(cf.Protocol),
		Section:     fmt.Sprintf("%s line %d", filepath.Base(cf.File), cs.Line),
		Desc:        cs.Requirement,
		Requirement: cs.Requirement,
		Level:       userLevels[cs.Level],
		// A user's steps may change the server's global state: they run
		// alone, after the concurrent cases.
		Phase: PhaseSerial,
		Run: func(t *T) error {
			conn, err := g.ScriptTransport(t)
			if err != nil {
				return err
			}
			defer conn.Close()
			opts := cf.Options
			if g.ScriptOptions != nil {
				opts = g.ScriptOptions(t.Env, opts)
			}
			b := scenario.WithTimeout(*cs.Block, t.Env.Timeout)
			return playCase(t, &b, cat, opts, conn)
		},
	}
}

// playCase plays b on conn and judges it: a rule a received message
// broke fails the case naming the rule and the bytes, a failed step fails
// it with what the step wanted and what came, and a case whose steps all
// pass passes.
func playCase(t *T, b *script.Block, cat script.Catalog, opts scenario.Options, conn ScriptConn) error {
	var options any
	if opts != nil {
		options = opts
	}
	tr := &lastRecv{ScriptConn: conn}
	rec := &caseRecorder{tr: tr}
	env := &script.Env{
		Catalog: cat, Session: cat.NewSession(options), Transport: tr,
		Vars:   script.Vars(nil).WithBuiltins(0, 0, 0, 0),
		Call:   func(ctx context.Context, v any) error { return thinkCall(t, v) },
		Record: rec,
	}
	err := script.Run(t.Ctx, b, env)
	if rec.found != nil {
		return rec.found
	}
	var f *script.Failure
	var v *VerifyError
	switch {
	case err == nil:
		return nil
	case t.Ctx.Err() != nil, errors.Is(err, ErrStalled):
		return err // not the target's doing
	case errors.As(err, &v):
		return v // the transport's own finding (a frame too long)
	case errors.As(err, &f):
		return Fail(fmt.Sprintf("step %s (line %d) to pass", f.Label, f.Line), f.Msg)
	}
	return err
}

// thinkCall plays a think step inside a case: its mean pause.
func thinkCall(t *T, v any) error {
	st, ok := v.(scenario.Step)
	if !ok || st.Kind != scenario.Think {
		return fmt.Errorf("a user case cannot play %v", v)
	}
	return t.Sleep(st.Think.Mean())
}

// caseRecorder keeps the first finding of a user case: a broken rule, or
// a step that failed with on_fail: continue.
type caseRecorder struct {
	tr    *lastRecv
	found error
}

func (r *caseRecorder) Request(script.Request) {}

func (r *caseRecorder) Violation(key script.Key, v script.Violation) {
	if r.found == nil {
		r.found = Failf(fmt.Sprintf("the reply to %s to keep %s", key.Message, v.Rule),
			"%s broken: %s; received: %s", v.Rule, v.Detail, HexShort(r.tr.last))
	}
}

func (r *caseRecorder) Fail(label string, err error) {
	if r.found == nil {
		r.found = Fail(fmt.Sprintf("step %s to pass", label), err.Error())
	}
}

// lastRecv keeps the last unit received, which a violation names.
type lastRecv struct {
	ScriptConn
	last []byte
}

func (l *lastRecv) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	ch, b, at, err := l.ScriptConn.Recv(deadline)
	if err == nil {
		l.last = b
	}
	return ch, b, at, err
}

// Route opens the channel a reply names, when the transport has channels.
func (l *lastRecv) Route(r script.Route) error {
	if rt, ok := l.ScriptConn.(script.Router); ok {
		return rt.Route(r)
	}
	return nil
}
