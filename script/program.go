package script

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr/vm"
)

// Pos is a place in the scenario file: 1-based line and column.
type Pos struct{ Line, Col int }

// Src is a scalar as the scenario wrote it, with where.
type Src struct {
	Pos
	S string
}

// Expr is an expression as written (Pos is its first character's), and,
// once checked, its program.
type Expr struct {
	Src
	prog *vm.Program
}

// Set reports whether the expression was given.
func (e Expr) Set() bool { return e.S != "" }

// OnFail is what a failed step does to its block.
type OnFail int

const (
	// Abort ends the run with the step's failure (the default).
	Abort OnFail = iota
	// Continue records the failure (Recorder.Fail) and goes on.
	Continue
	// Retry plays the step again, Step.Retries times at most, then aborts.
	Retry
)

// OnFails are OnFail's names in scenarios, by value.
var OnFails = []string{"abort", "continue", "retry"}

// Block is a list of steps played in order.
type Block struct{ Steps []Step }

// Step is one scripted step: exactly one of Send, Expect, If, Repeat,
// Call.
type Step struct {
	Pos
	// Label names the step in what is recorded ("send").
	Label   string
	OnFail  OnFail
	Retries int // Retry's bound

	Send   *Send
	Expect *Expect
	If     *If
	Repeat *Repeat
	// Call is a step the script does not play itself (a think): its
	// value goes to Env.Call.
	Call *Call
}

// CreatesRoom reports whether the block, once checked (Check), sends a
// message that creates a room (Message.CreatesRoom), in any branch or
// round of it.
func (b *Block) CreatesRoom() bool {
	for i := range b.Steps {
		s := &b.Steps[i]
		switch {
		case s.Send != nil && s.Send.msg != nil && s.Send.msg.CreatesRoom,
			s.If != nil && (s.If.Then.CreatesRoom() || s.If.Else.CreatesRoom()),
			s.Repeat != nil && s.Repeat.Body.CreatesRoom():
			return true
		}
	}
	return false
}

// Captures counts the captures of the block's expects, in every branch
// and round: at most the variables its scripts add to the builtins (a
// Vars' capacity).
func (b *Block) Captures() int {
	n := 0
	for i := range b.Steps {
		s := &b.Steps[i]
		switch {
		case s.Expect != nil:
			n += len(s.Expect.Capture)
		case s.If != nil:
			n += s.If.Then.Captures() + s.If.Else.Captures()
		case s.Repeat != nil:
			n += s.Repeat.Body.Captures()
		}
	}
	return n
}

// Send sends one message, or raw bytes.
type Send struct {
	Message Src // the message's name; "" with Raw
	Fields  []SetField
	To      Src // the channel; "" for the message's own
	Raw     Src // hex
	// Malformed, when given, are kinds to break the message by
	// (Breaker): one is drawn per send from the client's random source.
	Malformed []Src
	// Allow, with Raw, are rules the replies to the raw bytes may break
	// on purpose: until the next send, a violation of one is not
	// recorded.
	Allow []Src

	msg     *Message
	raw     []byte
	channel string
	allow   []string
}

// SetField is one field a send gives: a literal, or text with ${var}s.
type SetField struct {
	Name  Src
	Value Src

	field *Field
	val   any        // a literal, converted to the field's kind
	parts []tmplPart // otherwise: the template
}

// Expect waits for the next message, or for silence.
type Expect struct {
	// Messages are the names accepted; empty with Any.
	Messages []Src
	Any      bool
	// Within bounds the wait (the step's timeout).
	Within time.Duration
	Where  Expr
	// Capture are variables set from the matched message's fields.
	Capture []Capture
	// Silence, when set, expects no message at all for Silence.
	Silence time.Duration
}

// Capture sets variable Var to the field Field ("message": the name).
type Capture struct{ Var, Field Src }

// If plays Then when Cond holds, Else otherwise.
type If struct {
	Cond       Expr
	Then, Else Block
}

// Repeat plays Body Count times, or while While holds (Max times at most).
type Repeat struct {
	Count int
	While Expr
	Max   int
	Body  Block
}

// DefaultRepeatMax bounds a repeat's while when it gives no max.
const DefaultRepeatMax = 1000

// Call is a step played by the caller (Env.Call).
type Call struct{ Value any }

// Error is a problem of a script, at its place.
type Error struct {
	Pos
	// Exact: Col points at the problem (an expression's), not just at
	// its value.
	Exact bool
	Msg   string
	// Name, when set, is a name not among Names (for "did you mean").
	Name  string
	Names []string
}

func (e Error) Error() string {
	if e.Exact {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%d: %s", e.Line, e.Msg)
}

// Errors are every problem Check found, in order.
type Errors []Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}
