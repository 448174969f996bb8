package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// UnreachableError says the target did not answer the reachability check
// made before the run; the CLI exits 3 on it.
type UnreachableError struct {
	Target string
	Err    error
}

func (e *UnreachableError) Error() string {
	if errors.Is(e.Err, liveness.ErrGarbled) {
		// It is there and sending: not unreachable, but no server of
		// the protocol either.
		return fmt.Sprintf("target %s answers, but not in its protocol: %v", e.Target, e.Err)
	}
	return fmt.Sprintf("target %s unreachable: %v", e.Target, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// DefaultReachTimeout bounds the reachability check.
const DefaultReachTimeout = 2 * time.Second

// Reach checks, before anything else is sent, that a server speaking proto
// answers at addr: the protocol's own check (simclient.Client.Reach;
// e.g. udp-lobby: a LOBBY_LIST_ROOMS must draw a datagram back, in the
// header profile asked for; tcp-lobby: a connection must be accepted;
// leviathan: a Connect must draw a Leviathan datagram), given the plan's
// options opts. A failed check returns an *UnreachableError.
func Reach(ctx context.Context, proto scenario.ProtocolName, opts scenario.Options, addr netip.AddrPort, timeout time.Duration) error {
	p, ok := simclient.Describe(string(proto))
	if !ok {
		return fmt.Errorf("engine: no simulated client for protocol %q (have %v)", proto, simclient.Protocols())
	}
	_, err := reach(ctx, p, opts, addr, timeout)
	return err
}

// reach is Reach that also returns the options as the check's reply
// settled them (nil: as they were; udp-lobby's header_profile auto: the
// header the reply was in, the check's reply being the first reply auto
// guesses from).
func reach(ctx context.Context, p *simclient.Client, opts scenario.Options, addr netip.AddrPort, timeout time.Duration) (settled scenario.Options, err error) {
	if timeout <= 0 {
		timeout = DefaultReachTimeout
	}
	settled, err = p.Reach(ctx, addr, opts, timeout)
	if err != nil {
		return nil, &UnreachableError{Target: addr.String(), Err: err}
	}
	return settled, nil
}
