package tcpcases

import (
	"encoding/binary"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §2.2 Message framing.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/2.2/1", Protocol: ProtoTCP, Section: secTCPFraming, Rule: tcpwire.RuleSizeCount, Level: conformance.Must,
		Desc:        "replies are framed by a u32 little-endian length of the payload only, the payload starting with its type",
		Requirement: "All TCP messages are prefixed with a 4-byte length header … The length field contains the size of the payload only (excluding the 4-byte header). Byte Order: Little-endian",
		Run: func(t *conformance.T) error {
			c, err := dialTCP(t)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.send(&tcpwire.ListRoomsReq{}, "LIST_ROOMS_REQ"); err != nil {
				return err
			}
			// Read the raw prefix ourselves: a wrong prefix must be shown,
			// not fail the read.
			p, err := c.read(t.Env.Timeout)
			if err != nil {
				if ve, ok := err.(*conformance.VerifyError); ok {
					// The prefix was absurd: say what it would mean.
					n := binary.BigEndian.Uint32(c.hdr[:])
					if n < 4096 {
						ve.Actual += fmt.Sprintf("; read big-endian it is %d: the length is written big-endian", n)
					}
					return ve
				}
				_, err = tcpExpect(nil, err, "a LIST_ROOMS_ACK frame")
				return err
			}
			if len(p) == 0 {
				return conformance.Fail("a payload starting with its type byte", "a frame of length 0")
			}
			if tcpwire.Type(p[0]) != tcpwire.TypeListRoomsAck {
				return conformance.Failf("LIST_ROOMS_ACK (0x02) as the first payload byte", "type %v, payload %s", tcpwire.Type(p[0]), conformance.HexShort(p))
			}
			if _, err := tcpwire.CheckSize(p); err != nil {
				msg := err.Error()
				if len(p) >= 2 && len(p)-4 == 2+int(p[1])*tcpwire.RoomInfoSize {
					msg += "; the length prefix counts the 4-byte header too"
				}
				return conformance.Fail("length prefix = payload size = 2 + 39 × RoomCount", msg)
			}
			return nil
		},
	})
}
