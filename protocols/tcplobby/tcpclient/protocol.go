package tcpclient

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Spec is the TCP lobby protocol as the scenario loader knows it: the
// scenario half of its descriptor (protocols/tcplobby).
var Spec = scenario.ProtocolSpec{
	Name: tcpwire.ProtocolName, Order: 2, Transport: "tcp",
	Steps:         steps,
	Malformed:     []scenario.MalformedKind{scenario.WrongLength, scenario.UnknownType, scenario.RandomBytes},
	ProbeRequests: []scenario.StepKind{stepkit.ListRooms},
	ProbeScripts:  true,
}

// Client is how a run plays the TCP lobby protocol: the client half of its
// descriptor.
var Client = simclient.Client{
	Rules: rules(),
	Game: &simclient.Game{
		TTGJoin:   []scenario.StepKind{stepkit.Join, stepkit.CreateRoom},
		Room:      []scenario.StepKind{stepkit.Join, stepkit.CreateRoom},
		Fill:      []scenario.StepKind{stepkit.Join},
		WaitStart: []scenario.StepKind{stepkit.WaitGameStart},
		Leave:     []scenario.StepKind{stepkit.Disconnect},
	},
	Occupancy: occupancy,
	Reach:     reach,
	Watch:     watch,
	New:       New,
}

// reach checks a TCP lobby: a connection must be accepted (and not
// reset as it is: liveness.Closed says so).
func reach(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) (scenario.Options, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return nil, liveness.Closed("", err)
	}
	return nil, c.Close()
}

// watch is the watchdog's probe of a TCP lobby: a connection must be
// accepted and a LIST_ROOMS_REQ draw a frame back (any frame: an ERROR_MSG
// too proves the lobby's loop is alive). A hung lobby whose kernel still
// accepts connections fails it with silence; one that closes or resets
// the connection unanswered fails it too, saying so (liveness.Closed).
func watch(ctx context.Context, addr netip.AddrPort, _ scenario.Options, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return liveness.Closed("", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	if err := tcpwire.NewFrameWriter(c).WriteMessage(&tcpwire.ListRoomsReq{}); err != nil {
		return liveness.Closed("LIST_ROOMS_REQ", err)
	}
	if _, err := tcpwire.NewFrameReader(c, tcpwire.DefaultMaxFrame).Next(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no reply to LIST_ROOMS_REQ within %v", timeout)
		}
		return liveness.Closed("LIST_ROOMS_REQ", err)
	}
	return nil
}
