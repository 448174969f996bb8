package udpscript

import (
	"fmt"

	"github.com/lobbybench/lobbybench/script"
)

// ProbeCheck checks a rate_probe's request written as a script, once the
// catalog has (scenario.ProtocolSpec.ProbeCheck), for what the udp-lobby
// probe (protocols/udplobby/udpclient) cannot match. Its send gives no
// sequenceId: the probe gives each request an id of its own, which the
// reply echoes and by which it is matched to its request; one id given
// for them all would leave every reply matching each request alike.
func ProbeCheck(p *script.Pipelined) error {
	var errs script.Errors
	for _, f := range p.Send.Fields {
		if f.Name.S == fSeq {
			errs = append(errs, script.Error{Pos: f.Name.Pos,
				Msg: fmt.Sprintf("send: %s does not apply to a probe's request: the probe gives each request its own, which its reply echoes to be matched to it (one given for all would match every reply to each alike)", fSeq)})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
