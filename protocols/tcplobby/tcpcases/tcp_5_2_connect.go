package tcpcases

import (
	"errors"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §5.2 Connection management.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.2/1", Protocol: ProtoTCP, Section: secTCPConn, Rule: tcpwire.RuleSizeFixed, Level: conformance.Must,
		Owns:        []string{"CONNECT_ACK"},
		Desc:        "CONNECT_REQ (33 bytes) is answered with CONNECT_ACK of 10 bytes, Success 1, PlayerHash ≠ 0",
		Requirement: "CONNECT_REQ (0x10) Initial connection request (alternative to join flow) … CONNECT_ACK (0x11): Type | Success 1 byte | PlayerHash 8 bytes, Total: 10 bytes",
		Run: func(t *conformance.T) error {
			c, err := dialTCP(t)
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := c.request(&tcpwire.ConnectReq{PlayerName: tcpwire.MakeName(c.name)}, tcpwire.TypeConnectAck)
			if errors.Is(err, conformance.ErrSilence) || errors.Is(err, errClosed) {
				// tcp-lobby.md §5.2 calls CONNECT_REQ an "alternative to join flow":
				// a lobby may implement the join flow only.
				what := "no reply"
				if errors.Is(err, errClosed) {
					what = "the connection was closed"
				}
				return conformance.Warnf("CONNECT_ACK (CONNECT_REQ is optional: tcp-lobby.md §5.2 calls it an alternative to the join flow)",
					"%s (received: %s): the server does not implement CONNECT_REQ; clients must use CREATE_ROOM/JOIN_ROOM", what, typeNames(c.frames))
			}
			if p, err = tcpExpect(p, err, "CONNECT_ACK"); err != nil {
				return err
			}
			var m tcpwire.ConnectAck
			if err := m.DecodeOpts(p, tcpwire.Options{}); err != nil {
				return conformance.Fail("a CONNECT_ACK of 10 bytes", err.Error())
			}
			if !m.Success || m.PlayerHash == 0 {
				return conformance.Failf("Success 1 and a non-zero PlayerHash", "Success %v, PlayerHash %#x", m.Success, m.PlayerHash)
			}
			return nil
		},
	})
}
