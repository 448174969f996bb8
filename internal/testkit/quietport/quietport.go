// Package quietport picks loopback ports that a test hands to something
// that binds them a moment later (a server's instance pool, an owned
// server process, a relay that must keep its port once dead).
//
// A port found free and let go can be taken before it is bound again.
// Most sockets take their port from the kernel's ephemeral range (bound
// to port 0, or bound implicitly by a first send), and tests running
// beside each other (in this package and in others) open many of them:
// one once took a reference server's one instance port between the pick
// and the bind, and the server answered LOBBY_CREATE_ROOM with
// LOBBY_JOIN_FAILED. So ports are picked below the ephemeral range
// (net.ipv4.ip_local_port_range), where only explicit binds land, and
// never handed out twice in one process. Test binaries run side by side
// (go test runs packages at once), and each picks too: a process takes a
// slice of the range of its own (ownRange), held by a file lock until it
// exits, so two processes never hand out the same port either (one
// process's pick of 127.0.0.1:26688 was bound by another's server before
// its own).
package quietport

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// low is the first port picked; the range ends below the ephemeral one.
const low = 20000

// slices is how many parts the range is cut into, one a process: 3,192
// ports each, for conformance's fault rows' 59 lobbies of 24 ports at
// once and room to spare. More test processes than slices pick from the
// whole range (ownRange).
const slices = 4

// ephemeralLow is the first port of the kernel's ephemeral range, 32768
// where it cannot be read.
func ephemeralLow() int {
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		_, _ = fmt.Sscanf(string(b), "%d", &lo)
	}
	return lo
}

var own struct {
	once     sync.Once
	from, to int      // this process's ports: from..to-1
	lock     *os.File // holds the slice until the process exits
}

// ownRange returns the ports this process picks from: the first slice of
// low..ephemeralLow() no other process holds (lockSlice), or the whole
// range when every slice is held or locks are not available.
func ownRange() (from, to int) {
	own.once.Do(func() {
		high := ephemeralLow()
		own.from, own.to = low, high
		size := (high - low) / slices
		if size < 200 {
			return
		}
		dir := filepath.Join(os.TempDir(), "lobbybench-quietport")
		if os.MkdirAll(dir, 0o777) != nil {
			return
		}
		for i := range slices {
			if f := lockSlice(filepath.Join(dir, fmt.Sprintf("%d.lock", i))); f != nil {
				own.from, own.to, own.lock = low+i*size, low+(i+1)*size, f
				return
			}
		}
	})
	return own.from, own.to
}

var picked struct {
	sync.Mutex
	used map[int]bool
}

// loopback is the address Pick probes when given none.
var loopback = netip.MustParseAddr("127.0.0.1")

// Pick returns the first of n consecutive ports below the ephemeral range
// that are free for network ("udp" or "tcp") on every one of addrs
// (127.0.0.1 when none) now, and that no other caller in this process
// holds: they are the test's until it ends. The test fails when there are
// none.
func Pick(tb testing.TB, network string, n int, addrs ...netip.Addr) int {
	tb.Helper()
	if len(addrs) == 0 {
		addrs = []netip.Addr{loopback}
	}
	from, to := ownRange()
	picked.Lock()
	defer picked.Unlock()
	if picked.used == nil {
		picked.used = map[int]bool{}
	}
	take := func(base int) bool {
		if !bindable(network, base, n, addrs) {
			return false
		}
		for p := base; p < base+n; p++ {
			picked.used[p] = true
		}
		tb.Cleanup(func() { release(base, n) })
		return true
	}
	if last := to - n; last > from {
		// Random places first (two processes falling back to the whole
		// range rarely meet), then every place in turn (a slice crowded
		// by this process's own picks).
		for range 200 {
			if base := from + rand.IntN(last-from); take(base) {
				return base
			}
		}
		for base := from; base < last; base++ {
			if take(base) {
				return base
			}
		}
	}
	tb.Fatalf("quietport: no %d free %s ports in %d-%d on %v", n, network, from, to-1, addrs)
	return 0
}

// release gives ports base..base+n-1 back to Pick once the test that
// picked them ended (and with it what bound them): a process of many
// tests would otherwise run out of its slice.
func release(base, n int) {
	picked.Lock()
	defer picked.Unlock()
	for p := base; p < base+n; p++ {
		delete(picked.used, p)
	}
}

// bindable reports whether ports base..base+n-1 are free for network on
// each of addrs and given to nobody yet: it binds each and lets it go.
// picked is held.
func bindable(network string, base, n int, addrs []netip.Addr) bool {
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		if picked.used[p] {
			return false
		}
		for _, a := range addrs {
			c, err := listen(network, netip.AddrPortFrom(a, uint16(p)))
			if err != nil {
				return false
			}
			closers = append(closers, c)
		}
	}
	return true
}

func listen(network string, ap netip.AddrPort) (io.Closer, error) {
	if network == "tcp" {
		return net.Listen("tcp", ap.String())
	}
	return net.ListenPacket("udp", ap.String())
}

// Bind calls bind with random ports below the ephemeral range until one
// succeeds, and with port 0 as a last resort: for a socket whose port
// must not be handed to another socket soon after it closes (a dead
// proxy's port answered by a server started later would read as the
// target back up). Pick does not hand out a port Bind took, even once its
// socket closed.
func Bind(bind func(port int) error) error {
	from, to := ownRange()
	picked.Lock()
	defer picked.Unlock()
	if picked.used == nil {
		picked.used = map[int]bool{}
	}
	if to-from >= 200 {
		for range 64 {
			p := from + rand.IntN(to-from)
			if !picked.used[p] && bind(p) == nil {
				picked.used[p] = true
				return nil
			}
		}
	}
	return bind(0)
}
