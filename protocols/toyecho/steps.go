package toyecho

import (
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
)

// The toy's step kinds.
const (
	// Echo sends count requests, interval apart, each carrying the
	// scenario's echo_payload.
	Echo scenario.StepKind = "echo"
	// Say sends one request carrying its own text, which the reply must
	// carry back.
	Say scenario.StepKind = "say"
)

// steps are the toy's step kinds: echo, a series as leviathan's is, and
// say, the toy's own.
var steps = []scenario.StepSpec{
	stepkit.SeriesSpec(Echo),
	{Kind: Say, Request: true, Params: []string{"text"}, Shorthand: "text", Parse: parseSay},
}

// SayParams are a say step's parameters: the text it sends.
type SayParams struct{ Text string }

// Describe quotes the text, for describe.
func (p SayParams) Describe() string { return "text " + quoteText(p.Text) }

// parseSay reads say's text, 1 to maxPayload bytes: it is required.
func parseSay(k *scenario.StepKeys) any {
	var p SayParams
	if !k.Has("text") {
		k.Errorf("", "%s: missing \"text\"", k.What())
		return p
	}
	if s, ok := k.String("text"); ok {
		if err := checkPayload(s); err != nil {
			k.Errorf("text", "%s text: %v", k.What(), err)
		}
		p.Text = s
	}
	return p
}
