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
	"github.com/lobbybench/lobbybench/internal/words"
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
// host is read and judged too: servers in the wild answer from another
// port than the one asked, and a check that said "no reply" to them would
// be wrong. But the target's own port comes first: a datagram from
// another port decides only when the target's port stayed silent for the
// whole try it came in, and only if Mine (when set) takes it for an
// answer to this check's packets. On a shared host a check's new port
// also gets strays meant for its earlier holder (another client's late
// reply, a server's resend), which must not make a dead target alive or
// a garbled one look like another protocol. SamePort makes a judged reply
// from another port an error that names the port, for a protocol whose
// clients cannot take it.
type DatagramReach struct {
	What     string // what is sent, for "no reply to …"
	Packets  func(try int) [][]byte
	Judge    func(b []byte) (done bool, err error)
	Mine     func(b []byte) bool // nil: any datagram Judge takes may answer the check
	SamePort string              // non-empty: a reply from another port fails the check, with this said of why
}

// reachState is what a DatagramReach has heard so far.
type reachState struct {
	garbled []byte // the last datagram from the target's port Judge did not take
	other   *otherAnswer
	strays  int // datagrams from other ports of the host not taken for an answer
}

// otherAnswer is the first answer from another port of the target's host:
// the check's verdict if the target's own port stays silent.
type otherAnswer struct {
	from netip.AddrPort
	err  error
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
	var st reachState
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
		if done, err := p.listen(c, buf, addr, end, &st); done {
			return err
		}
		if st.garbled == nil && st.other != nil {
			return p.fromOther(addr, st.other)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return p.silence(&st, timeout)
}

// listen reads c until end for the try's answers: done when the target's
// own port decided the check (err its verdict), or the host refused it.
func (p DatagramReach) listen(c *net.UDPConn, buf []byte, addr netip.AddrPort, end time.Time, st *reachState) (done bool, err error) {
	for {
		c.SetReadDeadline(end)
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return true, ErrRefused
			}
			return false, nil // the try's end (or the check's)
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		b := buf[:n]
		switch {
		case from.Addr() != addr.Addr():
			// another host's datagram: not an answer
		case from != addr:
			p.heardOther(b, from, st)
		default:
			if done, err := p.Judge(b); done || err != nil {
				return true, err
			}
			st.garbled = append(st.garbled[:0], b...)
		}
	}
}

// heardOther notes datagram b from another port of the target's host: the
// first answer Judge takes (and Mine, if set), else a stray.
func (p DatagramReach) heardOther(b []byte, from netip.AddrPort, st *reachState) {
	if st.other == nil && (p.Mine == nil || p.Mine(b)) {
		if done, err := p.Judge(b); done || err != nil {
			st.other = &otherAnswer{from: from, err: err}
			return
		}
	}
	st.strays++
}

// fromOther is the verdict of an answer from another port: its own, or
// SamePort's refusal of a reply the protocol's clients cannot take.
func (p DatagramReach) fromOther(addr netip.AddrPort, o *otherAnswer) error {
	if o.err == nil && p.SamePort != "" {
		return fmt.Errorf("the target answers %s from another port, %v, not from %v: %s", p.What, o.from, addr, p.SamePort)
	}
	return o.err
}

// silence is the verdict of a check whose target's port decided nothing:
// garbled when it sent only datagrams of no protocol, else no reply
// (naming the datagrams other ports sent that were not taken for one).
func (p DatagramReach) silence(st *reachState, timeout time.Duration) error {
	if st.garbled != nil {
		return fmt.Errorf("%s drew only %w within %v: %d bytes: %s",
			p.What, liveness.ErrGarbled, timeout, len(st.garbled), hexPrefix(st.garbled))
	}
	if st.strays > 0 {
		return fmt.Errorf("no reply to %s within %v (%s from other ports of its host answered none of the check's packets)",
			p.What, timeout, words.Count(st.strays, "datagram"))
	}
	return fmt.Errorf("no reply to %s within %v", p.What, timeout)
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
