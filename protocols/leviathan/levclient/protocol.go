package levclient

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levscript"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Spec is the Leviathan protocol as the scenario loader knows it: the
// scenario half of its descriptor (protocols/leviathan).
var Spec = scenario.ProtocolSpec{
	Name: levwire.ProtocolName, Order: 3, Transport: "udp", VirtualFlows: true,
	Steps:         steps,
	Malformed:     []scenario.MalformedKind{scenario.Truncated, scenario.UnknownType, scenario.RandomBytes},
	ProbeRequests: []scenario.StepKind{Echo},
	ProbeScripts:  true,
	ProbeCheck:    levscript.ProbeCheck,
}

// Client is how a run plays the Leviathan protocol: the client half of its
// descriptor.
var Client = simclient.Client{
	Rules: rules(),
	Game: &simclient.Game{
		TTGJoin: []scenario.StepKind{JoinGame},
		Room:    []scenario.StepKind{JoinGame},
		Game:    []scenario.StepKind{JoinGame},
		Leave:   []scenario.StepKind{stepkit.Disconnect},
	},
	Occupancy: occupancy,
	Reach:     reach,
	New:       New,
}

// reach checks a Leviathan endpoint: a Connect request must draw a
// datagram that decodes as Leviathan. Silence fails (an endpoint answers
// Connect), and the last try also sends what identifies the servers of
// the other protocols over UDP (simclient.Identities: a LOBBY_LIST_ROOMS in
// both headers), so that a UDP lobby at that address is named as such.
func reach(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) (scenario.Options, error) {
	now := time.Now()
	conn, err := levconn.New(levconn.Config{}, now)
	var connect []byte
	if err == nil {
		if _, err = conn.SendRequest(now, levconn.Critical, levwire.ReqConnect,
			levwire.Connect{CheckValue: levwire.CheckValue}.Append(nil)); err == nil {
			connect = append([]byte(nil), conn.Poll(now)...)
		}
	}
	names, others := simclient.Identities(levwire.ProtocolName, "udp")
	last := [][]byte{connect}
	for _, id := range others {
		last = append(last, id.Packets...)
	}
	var pkt levwire.Packet
	r := simclient.DatagramReach{
		What:     "a Leviathan Connect",
		SamePort: "lobbybench's Leviathan clients read a connected socket, which takes replies from the endpoint's port only (docs/limitations.md)",
		Packets: func(try int) [][]byte {
			if try == simclient.ReachTries-1 {
				return last
			}
			return [][]byte{connect}
		},
		Judge: func(b []byte) (bool, error) {
			if levwire.Decode(&pkt, b, levwire.Lenient) == nil {
				return true, nil
			}
			for k, id := range others {
				if id.Is(b) {
					return true, fmt.Errorf("no Leviathan reply to Connect, but the address answers the %s protocol (use protocol: %s, or aim at the Leviathan port)", id.Title, names[k])
				}
			}
			return false, nil // not Leviathan: keep listening
		},
	}
	return nil, r.Run(ctx, addr, timeout)
}
