package tcpclient

import (
	"context"
	"net"
	"net/netip"
	"time"

	refserver "github.com/lobbybench/lobbybench/reference-server"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

func init() {
	simclient.Register(simclient.Protocol{
		ProtocolSpec: scenario.ProtocolSpec{
			Name: scenario.TCPLobby, Order: 2, Transport: "tcp",
			Steps: []scenario.StepKind{scenario.Connect, scenario.ListRooms, scenario.CreateRoom, scenario.Join, scenario.Ready,
				scenario.Start, scenario.WaitCountdown, scenario.WaitGameStart, scenario.Disconnect},
			Malformed:     []scenario.MalformedKind{scenario.WrongLength, scenario.UnknownType, scenario.RandomBytes},
			ProbeRequests: []scenario.StepKind{scenario.ListRooms},
		},
		Reach: reach,
		// The TCP lobby hands its games to the UDP lobby's instances.
		EmbeddedParts: []string{refserver.TCPLobby, refserver.UDPLobby},
		New:           New,
	})
}

// reach checks a TCP lobby: a connection must be accepted.
func reach(ctx context.Context, addr netip.AddrPort, _ string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return "", err
	}
	return "", c.Close()
}
