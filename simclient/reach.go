package simclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/refusals"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/scenario"
)

// ReachTries is how many times a datagram reachability check sends within
// its time.
const ReachTries = 3

// ErrRefused is a datagram reachability check's error when the target's
// host answered with ICMP port unreachable. It matches
// syscall.ECONNREFUSED under errors.Is, so that package liveness
// classifies it as refused.
var ErrRefused error = refusedError{}

type refusedError struct{}

func (refusedError) Error() string { return "connection refused (nothing listens on that UDP port)" }

func (refusedError) Is(target error) bool { return target == syscall.ECONNREFUSED }

// DatagramReach is the reachability check of a protocol over UDP:
// Packets(try) are sent on each of ReachTries tries, spread over the time
// ctx leaves; Judge reads a reply: done with a nil error means reachable,
// an error a reply proving the target speaks something else; not done, no
// error: not a reply of the protocol, keep listening. A check that heard
// only such datagrams fails saying what came (its size and first bytes),
// wrapping liveness.ErrGarbled: never "no reply" when something replied.
//
// The socket is unconnected, so a reply from another port of the target's
// host is read and judged as one from the target's port: servers in the
// wild answer from another port than the one asked, and a check that
// said "no reply" to them would be wrong. SamePort makes such a judged
// reply an error that names the port, for a protocol whose clients cannot
// take it.
type DatagramReach struct {
	What     string // what is sent, for "no reply to …"
	Packets  func(try int) [][]byte
	Judge    func(b []byte) (done bool, err error)
	SamePort string // non-empty: a reply from another port fails the check, with this said of why
}

// Run checks addr within timeout (ctx may end it sooner).
func (p DatagramReach) Run(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	network := "udp6"
	if addr.Addr().Is4() {
		network = "udp4"
	}
	c, err := net.ListenUDP(network, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	refusals.Report(c)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	var garbled []byte // the last datagram Judge did not take
	silence := func() error {
		if garbled != nil {
			return fmt.Errorf("%s drew only %w within %v: %d bytes: %s",
				p.What, liveness.ErrGarbled, timeout, len(garbled), hexPrefix(garbled))
		}
		return fmt.Errorf("no reply to %s within %v", p.What, timeout)
	}
	for i := 0; i < ReachTries; i++ {
		for _, pkt := range p.Packets(i) {
			if _, err := c.WriteToUDPAddrPort(pkt, addr); err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return ErrRefused
				}
				return err
			}
		}
		end := time.Now().Add(time.Until(deadline) / time.Duration(ReachTries-i))
		for {
			c.SetReadDeadline(end)
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return ErrRefused
				}
				if ctx.Err() != nil {
					return silence()
				}
				break // next try
			}
			from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			if from.Addr() != addr.Addr() {
				continue // another host's datagram: not an answer
			}
			done, err := p.Judge(buf[:n])
			if done && err == nil && from != addr && p.SamePort != "" {
				return fmt.Errorf("the target answers %s from another port, %v, not from %v: %s", p.What, from, addr, p.SamePort)
			}
			if done || err != nil {
				return err
			}
			garbled = append(garbled[:0], buf[:n]...)
		}
	}
	return silence()
}

// hexPrefix is b's first 16 bytes in hex, "…" after when there are more.
func hexPrefix(b []byte) string {
	if len(b) > 16 {
		return fmt.Sprintf("% x …", b[:16])
	}
	return fmt.Sprintf("% x", b)
}

// Identify is how a protocol's server is told from others: packets that
// draw a reply from one, and whether a reply is such a server's. Another
// protocol's reachability check sends them last, so that a target that
// answers the wrong protocol is named (Identified).
type Identify struct {
	// Title names the protocol in messages ("UDP lobby").
	Title string
	// Packets draw a reply from a server of the protocol.
	Packets [][]byte
	// Is reports whether b is a reply of a server of the protocol.
	Is func(b []byte) bool
}

// Identities returns the Identify of every registered protocol over
// transport but except, with its name, in documentation order.
func Identities(except scenario.ProtocolName, transport string) (names []scenario.ProtocolName, ids []*Identify) {
	for _, name := range Protocols() {
		p, ok := Describe(name)
		if !ok || p.Name == except || p.Identify == nil || p.Transport != transport {
			continue
		}
		names, ids = append(names, p.Name), append(ids, p.Identify)
	}
	return names, ids
}
