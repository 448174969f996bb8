package levscript

import (
	"fmt"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// ProbeCheck checks a rate_probe's request written as a script, once the
// catalog has (scenario.ProtocolSpec.ProbeCheck), for what the Leviathan
// probe (protocols/leviathan/levclient) cannot send or match. Its send is
// a request, since a reply answers only a request (Response
// CloseConnection, the one response a client sends, ends the
// connection). It gives no MessageNumber: the probe numbers each request
// as the connection numbers its messages, and a reply names the request
// it answers by its ResponseTo; one number given for them all would make
// every request after the first a duplicate, which the server drops.
func ProbeCheck(p *script.Pipelined) error {
	var errs script.Errors
	if e, ok := byName(p.Message()); ok && e.kind != lv.KindRequest {
		errs = append(errs, script.Error{Pos: p.Send.Message.Pos,
			Msg: fmt.Sprintf("send: %s is a response, which nothing answers: a probe sends a request", p.Message())})
	}
	for _, f := range p.Send.Fields {
		if f.Name.S == fieldNumber {
			errs = append(errs, script.Error{Pos: f.Name.Pos,
				Msg: fmt.Sprintf("send: %s does not apply to a probe's request: each takes the connection's next, which its reply's %s names (one given for all would make the rest duplicates, which the server drops)",
					fieldNumber, fieldResponseTo)})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
