package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/levconn"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/wire/leviathan"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// UnreachableError says the target did not answer the probe made before the
// run; the CLI exits 3 on it.
type UnreachableError struct {
	Target string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("target %s unreachable: %v", e.Target, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// DefaultProbeTimeout bounds the reachability probe.
const DefaultProbeTimeout = 2 * time.Second

// probeTries is how many times a UDP probe sends within its timeout.
const probeTries = 3

// Probe checks that a server speaking proto answers at addr before anything
// else is sent. A failed probe returns an *UnreachableError.
//
//   - tcp-lobby: a connection must be accepted.
//   - udp-lobby: a LOBBY_LIST_ROOMS must draw a datagram back (judging it
//     is the run's job), re-sent up to 3 times within timeout. With
//     header_profile auto (or empty) each try sends the request in both
//     header profiles (spec and rtype17), so a server speaking either is
//     reachable. With an explicit profile the last try also sends the other
//     profile: a server that answers only that one fails the probe with a
//     message naming the header_profile to set.
//   - leviathan: a Connect request must draw a datagram that decodes as
//     Leviathan. Silence fails (a Leviathan endpoint answers Connect), and
//     the last try also sends a LOBBY_LIST_ROOMS in both headers so that a
//     UDP lobby at that address is named as such.
//
// An ICMP port unreachable (connection refused) fails at once.
func Probe(ctx context.Context, proto scenario.Protocol, profile string, addr netip.AddrPort, timeout time.Duration) error {
	_, err := probe(ctx, proto, profile, addr, timeout)
	return err
}

// probe is Probe that also returns, for udp-lobby, the header profile the
// server's reply was in ("" when it could not tell): with header_profile
// auto, the run takes it, the probe's reply being the first reply auto
// guesses from.
func probe(ctx context.Context, proto scenario.Protocol, profile string, addr netip.AddrPort, timeout time.Duration) (answered string, err error) {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fail := func(err error) error { return &UnreachableError{Target: addr.String(), Err: err} }
	var p udpProbe
	switch proto {
	case scenario.TCPLobby:
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr.String())
		if err != nil {
			return "", fail(err)
		}
		return "", c.Close()
	case scenario.UDPLobby:
		p = lobbyProbe(profile, &answered)
	case scenario.Leviathan:
		p = leviathanProbe()
	default:
		return "", fmt.Errorf("engine: no probe for protocol %q", proto)
	}
	if err := p.run(ctx, addr, timeout); err != nil {
		return "", fail(err)
	}
	return answered, nil
}

// udpProbe is a datagram probe: packets(try) are sent on each try; judge
// reads a reply: done (nil error) means reachable, an error a reply that
// proves the target speaks something else; not done, no error: keep
// listening.
type udpProbe struct {
	what    string // what is sent, for "no reply to …"
	packets func(try int) [][]byte
	judge   func(b []byte) (done bool, err error)
}

var errRefused = errors.New("connection refused (nothing listens on that UDP port)")

func (p udpProbe) run(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	for i := 0; i < probeTries; i++ {
		for _, pkt := range p.packets(i) {
			if _, err := c.Write(pkt); err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return errRefused
				}
				return err
			}
		}
		deadline, _ := ctx.Deadline()
		end := time.Now().Add(time.Until(deadline) / time.Duration(probeTries-i))
		for {
			c.SetReadDeadline(end)
			n, err := c.Read(buf)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return errRefused
				}
				if ctx.Err() != nil {
					return fmt.Errorf("no reply to %s within %v", p.what, timeout)
				}
				break // next try
			}
			if done, err := p.judge(buf[:n]); done || err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("no reply to %s within %v", p.what, timeout)
}

// Sequence ids of the probe's LOBBY_LIST_ROOMS, one per header profile.
const (
	probeSeqSpec    = 0xFFFE
	probeSeqRType17 = 0xFFFD
)

// lobbyProbe probes a UDP lobby in profile (spec, rtype17, or auto/""),
// storing the profile of the reply in *answered.
func lobbyProbe(profile string, answered *string) udpProbe {
	both := [][]byte{
		udplobby.AppendListRooms(nil, udplobby.ProfileSpec, probeSeqSpec),
		udplobby.AppendListRooms(nil, udplobby.ProfileRType17, probeSeqRType17),
	}
	want, err := udplobby.ParseProfile(profile)
	if err != nil { // "auto" or empty: either profile will do
		return udpProbe{
			what:    "LOBBY_LIST_ROOMS (spec or rtype17 header)",
			packets: func(int) [][]byte { return both },
			judge: func(b []byte) (bool, error) {
				if got, ok := udplobby.GuessProfile(b); ok {
					*answered = got.String()
				}
				return true, nil
			},
		}
	}
	mine, other := both[0], both[1]
	if want == udplobby.ProfileRType17 {
		mine, other = other, mine
	}
	return udpProbe{
		what: fmt.Sprintf("LOBBY_LIST_ROOMS (%v header)", want),
		packets: func(try int) [][]byte {
			if try == probeTries-1 {
				return [][]byte{mine, other}
			}
			return [][]byte{mine}
		},
		judge: func(b []byte) (bool, error) {
			if got, ok := udplobby.GuessProfile(b); ok && got != want {
				return true, fmt.Errorf("no reply in the %v header, but the server answers the %v header: set header_profile: %v (or auto)", want, got, got)
			}
			*answered = want.String()
			return true, nil
		},
	}
}

func leviathanProbe() udpProbe {
	now := time.Now()
	conn, err := levconn.New(levconn.Config{}, now)
	var connect []byte
	if err == nil {
		if _, err = conn.SendRequest(now, levconn.Critical, leviathan.ReqConnect,
			leviathan.Connect{CheckValue: leviathan.CheckValue}.Append(nil)); err == nil {
			connect = append([]byte(nil), conn.Poll(now)...)
		}
	}
	listSpec := udplobby.AppendListRooms(nil, udplobby.ProfileSpec, probeSeqSpec)
	list17 := udplobby.AppendListRooms(nil, udplobby.ProfileRType17, probeSeqRType17)
	var pkt leviathan.Packet
	return udpProbe{
		what: "a Leviathan Connect",
		packets: func(try int) [][]byte {
			if try == probeTries-1 {
				return [][]byte{connect, listSpec, list17}
			}
			return [][]byte{connect}
		},
		judge: func(b []byte) (bool, error) {
			if leviathan.Decode(&pkt, b, leviathan.Lenient) == nil {
				return true, nil
			}
			if _, ok := udplobby.GuessProfile(b); ok {
				return true, errors.New("no Leviathan reply to Connect, but the address answers the UDP lobby protocol (use protocol: udp-lobby, or aim at the Leviathan port)")
			}
			return false, nil // not Leviathan: keep listening
		},
	}
}
