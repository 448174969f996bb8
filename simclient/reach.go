package simclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// ReachTries is how many times a datagram reachability check sends within
// its time.
const ReachTries = 3

// ErrRefused is a datagram reachability check's error when the target's
// host answered with ICMP port unreachable.
var ErrRefused = errors.New("connection refused (nothing listens on that UDP port)")

// DatagramReach is the reachability check of a protocol over UDP:
// Packets(try) are sent on each of ReachTries tries, spread over the time
// ctx leaves; Judge reads a reply: done with a nil error means reachable,
// an error a reply proving the target speaks something else; not done, no
// error: keep listening.
type DatagramReach struct {
	What    string // what is sent, for "no reply to …"
	Packets func(try int) [][]byte
	Judge   func(b []byte) (done bool, err error)
}

// Run checks addr within timeout (ctx may end it sooner).
func (p DatagramReach) Run(ctx context.Context, addr netip.AddrPort, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64<<10)
	for i := 0; i < ReachTries; i++ {
		for _, pkt := range p.Packets(i) {
			if _, err := c.Write(pkt); err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return ErrRefused
				}
				return err
			}
		}
		end := time.Now().Add(time.Until(deadline) / time.Duration(ReachTries-i))
		for {
			c.SetReadDeadline(end)
			n, err := c.Read(buf)
			if err != nil {
				if errors.Is(err, syscall.ECONNREFUSED) {
					return ErrRefused
				}
				if ctx.Err() != nil {
					return fmt.Errorf("no reply to %s within %v", p.What, timeout)
				}
				break // next try
			}
			if done, err := p.Judge(buf[:n]); done || err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("no reply to %s within %v", p.What, timeout)
}

// ReachListRooms returns the LOBBY_LIST_ROOMS a reachability check sends,
// in the spec and the rtype17 header profile (sequence ids 0xFFFE and
// 0xFFFD): the udp-lobby check asks with them, the Leviathan check sends
// them last to name a UDP lobby found at a Leviathan address.
func ReachListRooms() (spec, rtype17 []byte) {
	return udplobby.AppendListRooms(nil, udplobby.ProfileSpec, 0xFFFE),
		udplobby.AppendListRooms(nil, udplobby.ProfileRType17, 0xFFFD)
}
