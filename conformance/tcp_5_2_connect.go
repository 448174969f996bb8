package conformance

import "github.com/lobbybench/lobbybench/wire/tcplobby"

// seed 004 §5.2 Connection management.

func init() {
	Register(&Case{
		ID: "tcp/5.2/1", Protocol: ProtoTCP, Section: secTCPConn, Rule: tcplobby.RuleSizeFixed, Level: Must,
		Desc:        "CONNECT_REQ (33 bytes) is answered with CONNECT_ACK of 10 bytes, Success 1, PlayerHash ≠ 0",
		Requirement: "CONNECT_REQ (0x10) Initial connection request … CONNECT_ACK (0x11): Type | Success 1 byte | PlayerHash 8 bytes, Total: 10 bytes",
		Run: func(t *T) error {
			c, err := dialTCP(t)
			if err != nil {
				return err
			}
			defer c.Close()
			p, err := c.request(&tcplobby.ConnectReq{PlayerName: tcplobby.MakeName(c.name)}, tcplobby.TypeConnectAck)
			if p, err = tcpExpect(p, err, "CONNECT_ACK"); err != nil {
				return err
			}
			var m tcplobby.ConnectAck
			if err := m.DecodeOpts(p, tcplobby.Options{}); err != nil {
				return Fail("a CONNECT_ACK of 10 bytes", err.Error())
			}
			if !m.Success || m.PlayerHash == 0 {
				return Failf("Success 1 and a non-zero PlayerHash", "Success %v, PlayerHash %#x", m.Success, m.PlayerHash)
			}
			return nil
		},
	})
}
