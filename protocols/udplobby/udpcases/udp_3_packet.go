package udpcases

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §3 Packet structure: header, payload, CRC-32 trailer.

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/3/1", Protocol: ProtoUDP, Section: secPacket, Rule: string(udpwire.RuleCRC), Level: conformance.Must,
		Desc:        "every lobby reply ends with the CRC-32/IEEE of header+payload, big-endian",
		Requirement: "CRC32 Checksum (4 bytes) | Integrity verification … // Append as big-endian 4 bytes",
		Run:         udpReplyCRC,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/3/2", Protocol: ProtoUDP, Section: secPacket, Rule: string(udpwire.RulePacketType), Level: conformance.Must,
		Desc:        "every lobby reply carries packetType 0x02 (server to client)",
		Requirement: "std::uint8_t packetType; // ClientToServer (0x01) or ServerToClient (0x02)",
		Run:         udpReplyPacketType,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/3/3", Protocol: ProtoUDP, Section: secPacket, Rule: string(udpwire.RuleLength), Level: conformance.Must,
		Desc:        "every lobby reply is exactly header + payloadSize + 4 bytes, with originalSize = payloadSize",
		Requirement: "std::uint16_t payloadSize; // Size of payload section / std::uint16_t originalSize; // Size before compression (same if not compressed)",
		Run:         udpReplyLength,
	})
	addCase(&conformance.Case{
		ID: "udp-lobby/3/4", Protocol: ProtoUDP, Section: secPacket, Level: conformance.Should,
		Desc:        "lobby replies come from the address and port the request was sent to",
		Requirement: "Server → Client responses (udp-lobby.md §2); the documents name one lobby port and no other source, and NAT and connected UDP sockets only pass replies from the port the client sent to",
		Run: func(t *conformance.T) error {
			rs, err := replies(t)
			if err != nil {
				return err
			}
			var seen []sourceSeen
			for _, x := range rs.all() {
				seen = append(seen, sourceSeen{name: fmt.Sprintf("%v (reply to %s)", x.x.reply.typ, x.name), to: x.x.to, from: x.x.reply.from})
			}
			return judgeReplySource(t, "lobby", seen)
		},
	})
}

// checkReplies runs check over every reply of the shared exchange set and
// fails with the list of those it rejects.
func checkReplies(t *conformance.T, expected string, check func(name string, m rawMsg) string) error {
	rs, err := replies(t)
	if err != nil {
		return err
	}
	var bad []string
	n := 0
	for _, x := range rs.all() {
		n++
		if msg := check(x.name, x.x.reply); msg != "" {
			bad = append(bad, fmt.Sprintf("reply to %s: %s", x.name, msg))
		}
	}
	if n == 0 {
		return conformance.Skipf("no lobby reply to look at")
	}
	if len(bad) > 0 {
		return conformance.Fail(expected, strings.Join(bad, "; "))
	}
	t.Notef("%d replies checked", n)
	return nil
}

func udpReplyCRC(t *conformance.T) error {
	return checkReplies(t, "a big-endian CRC-32/IEEE of header+payload as the last 4 bytes of every reply",
		func(_ string, m rawMsg) string { return crcDiagnosis(m.b) })
}

func udpReplyPacketType(t *conformance.T) error {
	return checkReplies(t, "packetType 0x02 in every reply", func(_ string, m rawMsg) string {
		if m.pt != udpwire.ServerToClient {
			return fmt.Sprintf("packetType 0x%02x (%v)", uint8(m.pt), m.typ)
		}
		return ""
	})
}

func udpReplyLength(t *conformance.T) error {
	p := headerProfile(t.Env)
	return checkReplies(t, "datagram length = header + payloadSize + 4 and originalSize = payloadSize", func(_ string, m rawMsg) string {
		var bad []string
		if want := p.PacketLen(int(m.psize)); len(m.b) != want {
			bad = append(bad, fmt.Sprintf("%v is %d bytes but its payloadSize %d makes %d", m.typ, len(m.b), m.psize, want))
		}
		if m.osize != m.psize {
			bad = append(bad, fmt.Sprintf("%v originalSize %d ≠ payloadSize %d", m.typ, m.osize, m.psize))
		}
		if p == udpwire.ProfileRType17 {
			if [4]byte(m.b[:4]) != udpwire.Magic {
				bad = append(bad, fmt.Sprintf("magic % x, want % x", m.b[:4], udpwire.Magic[:]))
			}
			if m.b[4] != udpwire.Version {
				bad = append(bad, fmt.Sprintf("version byte 0x%02x, want 0x%02x", m.b[4], udpwire.Version))
			}
		}
		return strings.Join(bad, ", ")
	})
}
