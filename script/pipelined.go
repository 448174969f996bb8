package script

import "time"

// Pipelined is a send and the expect that answers it, which a protocol's
// own loop plays many at a time, matching each reply to its send by the
// protocol's means (udp-lobby's sequence ids, tcp-lobby's order,
// Leviathan's ResponseTo): a rate_probe's request
// written as a script. Make encodes each send as a send step would;
// Accepts judges a reply as the expect would. The loader checks it with
// Check, as the block of its two steps.
type Pipelined struct {
	Send   *Send
	Expect *Expect
}

// Block is p's two steps, for Check.
func (p *Pipelined) Block() *Block {
	return &Block{Steps: []Step{{Send: p.Send}, {Expect: p.Expect}}}
}

// Message is the name of the message p sends, once checked.
func (p *Pipelined) Message() string { return p.Send.msg.Name }

// Channel is the channel p's send goes on ("" for a protocol's one),
// once checked.
func (p *Pipelined) Channel() string { return p.Send.channel }

// Make encodes p's send for env's session, its fields resolved from
// env's variables and the session told its intended time, as a send step
// would; the caller sends it.
func (p *Pipelined) Make(env *Env, intended time.Time) ([]byte, error) {
	return env.make(p.Send, intended)
}

// Accepts reports whether d, a received message, answers p's send as its
// expect wants: one of its messages (any, when it says so, but a message
// that could not be read) for which its where holds. It takes d's fields
// back (FieldsMap).
func (p *Pipelined) Accepts(env *Env, d Decoded) bool {
	defer env.recycle(d)
	e := p.Expect
	if !p.Expects(d.Name) {
		return false
	}
	if e.Where.prog == nil {
		return true
	}
	vars := env.exprEnv(d)
	defer putMap(vars)
	return where(e, vars) == nil
}

// Expects reports whether a message named name is one of the expect's
// (any, when it says so, but one that could not be read: name ""), its
// where aside: a protocol whose reply may name no request (Leviathan's
// ResponseTo 0) takes only such a reply for the answer to one.
func (p *Pipelined) Expects(name string) bool {
	return name != "" && (p.Expect.Any || named(p.Expect.Messages, name))
}
