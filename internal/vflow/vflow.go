//go:build linux

package vflow

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
)

// Flows is an attached range: the steered sockets (Config.Sockets), their
// SOCKMAP and the sk_lookup program's link. Close detaches and closes
// everything.
type Flows struct {
	cfg   Config
	conns []*net.UDPConn
	m     *ebpf.Map
	prog  *ebpf.Program
	link  closer
}

// Open steers every UDP datagram addressed to cfg's range to a socket of
// this process (cfg.Sockets of them, each flow's to one), read with
// Receivers. The steering lasts until Close or the end of the process. A
// cfg without Addrs takes the first default block (DefaultBlocks from
// DefaultAddrs) whose steered socket it can bind: every vflow user binds
// its range's first address:port, so that bind is what keeps two
// lobbybench processes (or two runs in one) on disjoint ranges.
func Open(cfg Config) (*Flows, error) {
	if cfg.Addrs.IsValid() {
		return linux.open(cfg)
	}
	return openFree(cfg, linux.open)
}

// openFree opens cfg on the first default block open can bind.
func openFree(cfg Config, open func(Config) (*Flows, error)) (*Flows, error) {
	var err error
	for i := range DefaultBlocks {
		cfg.Addrs = defaultBlock(i)
		var f *Flows
		if f, err = open(cfg); !errors.Is(err, unix.EADDRINUSE) {
			return f, err
		}
	}
	return nil, fmt.Errorf("vflow: every default range from %s to %s is held by another user (%w): give the run a range of its own",
		defaultBlock(0), defaultBlock(DefaultBlocks-1), err)
}

func (s system) open(cfg Config) (_ *Flows, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	f := &Flows{cfg: cfg}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	for k := range cfg.Sockets {
		c, err := listen(cfg, k)
		if err != nil {
			return nil, err
		}
		f.conns = append(f.conns, c)
	}
	f.m, err = ebpf.NewMap(&ebpf.MapSpec{Name: "vflow_sock", Type: ebpf.SockMap, KeySize: 4, ValueSize: 8, MaxEntries: uint32(cfg.Sockets)})
	if err != nil {
		return nil, refused("creating the SOCKMAP", err, needBPF)
	}
	for k, c := range f.conns {
		if err := f.holdSocket(k, c); err != nil {
			return nil, refused("putting the socket in the SOCKMAP", err, needBPF, needNetAdmin)
		}
	}
	if f.prog, err = ebpf.NewProgram(program(cfg, f.m)); err != nil {
		return nil, refused("loading the sk_lookup program", err, needBPF, needNetAdmin)
	}
	ns, err := os.Open("/proc/self/ns/net")
	if err != nil {
		return nil, fmt.Errorf("vflow: opening this process's network namespace: %w", err)
	}
	defer ns.Close()
	if f.link, err = s.attach(int(ns.Fd()), f.prog); err != nil {
		return nil, refused("attaching the sk_lookup program to the network namespace", err, needNetAdmin)
	}
	return f, nil
}

// attachNetNs attaches through a BPF link that only this process's
// descriptor holds (never pinned), so the kernel detaches it when the
// process ends however it ends.
func attachNetNs(netns int, p *ebpf.Program) (closer, error) {
	return link.AttachNetNs(netns, p)
}

// listen opens steered socket k on the range's first address and its
// k-th port (socket 0's bind is what claims the range: Open), with a large
// receive buffer, the original destination and kernel receive time
// reported on each datagram, and the kernel's errors for the flows'
// datagrams (an ICMP port unreachable) on its error queue
// (IP_RECVERR: the Receiver reads them; Conn.Connect says who hears them).
func listen(cfg Config, k int) (*net.UDPConn, error) {
	at := netip.AddrPortFrom(cfg.Addrs.Addr(), cfg.Ports.First+uint16(k))
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(at))
	if err != nil {
		return nil, fmt.Errorf("vflow: opening the steered socket on %s: %w", at, err)
	}
	if err := sockbuf.SetRead(c, cfg.ReadBuffer); err != nil {
		c.Close()
		return nil, fmt.Errorf("vflow: setting the steered socket's receive buffer to %d bytes: %w", cfg.ReadBuffer, err)
	}
	if err := setsockopts(c, [][3]int{
		{unix.IPPROTO_IP, unix.IP_RECVORIGDSTADDR, 1},
		{unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1},
		{unix.IPPROTO_IP, unix.IP_RECVERR, 1},
	}); err != nil {
		c.Close()
		return nil, fmt.Errorf("vflow: steered socket on %s: %w", at, err)
	}
	return c, nil
}

func setsockopts(c *net.UDPConn, opts [][3]int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for _, o := range opts {
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), o[0], o[1], o[2])
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// holdSocket puts c in the SOCKMAP at key k.
func (f *Flows) holdSocket(k int, c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var uerr error
	if err := rc.Control(func(fd uintptr) {
		uerr = f.m.Update(uint32(k), uint64(fd), ebpf.UpdateAny)
	}); err != nil {
		return err
	}
	return uerr
}

// Config returns the range, defaults filled in.
func (f *Flows) Config() Config { return f.cfg }

// Close detaches the program and closes the map and the sockets; a
// Receiver blocked on one returns. The range may be opened again after; a
// second Close does nothing.
func (f *Flows) Close() error {
	var errs []error
	if f.link != nil {
		errs = append(errs, f.link.Close())
		f.link = nil
	}
	if f.prog != nil {
		errs = append(errs, f.prog.Close())
		f.prog = nil
	}
	if f.m != nil {
		errs = append(errs, f.m.Close())
		f.m = nil
	}
	for _, c := range f.conns {
		errs = append(errs, c.Close())
	}
	f.conns = nil
	return errors.Join(errs...)
}
