package simclient

import (
	"fmt"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// RuleInfo describes a rule a protocol's run can report (Client.Rules):
// a codec's decode rule or a client's semantic one.
type RuleInfo struct {
	ID      string
	Section string // where docs/protocols states it, e.g. "udp-lobby.md §12"
	Summary string
}

// ReplyViolation is the one place the three clients decide what a reply
// that broke rule does to the request it answers. It records the
// violation (rule, the reply's bytes data, the request req or nil, detail)
// on rec and returns nil when the session carries on: the reply is usable
// (the fields the flow needs could be read from it) and the scenario's
// on_violation is continue (the default). Otherwise it returns the
// *RequestError (result.ReasonViolation) the request fails with: the
// reply is unusable, or on_violation is fail_step.
func (sh *Shared) ReplyViolation(rec *metrics.Recorder, rule string, data, req []byte, detail string, usable bool) *RequestError {
	if usable && sh.Plan.OnViolation != scenario.ViolationFailStep {
		rec.Violation(rule, time.Now(), data, req, detail+" (carried on with the fields read)")
		return nil
	}
	rec.Violation(rule, time.Now(), data, req, detail)
	return &RequestError{Reason: result.ReasonViolation, Err: fmt.Errorf("%s: %s", rule, detail)}
}
