package udpserver

import (
	"net"
	"net/netip"
	"syscall"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
)

func rcvbuf(t *testing.T, c *net.UDPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var serr error
	rc.Control(func(fd uintptr) { n, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) })
	if serr != nil {
		t.Fatal(serr)
	}
	return n
}

// TestInstanceSocketBuffer: SocketBuffer applies to instance sockets as to
// the lobby's (pooled and OS-chosen ports alike); 0 keeps the OS default.
func TestInstanceSocketBuffer(t *testing.T) {
	def := testConfig() // SocketBuffer 0
	s0 := start(t, def)
	in0, _ := s0.newInstance(netip.Addr{}, 0, s0.now())
	osDefault := rcvbuf(t, in0.conn.UDPConn)

	for _, base := range []int{0, quietport.Pick(t, "udp", 2)} {
		cfg := testConfig()
		cfg.SocketBuffer = 3 << 20
		cfg.BasePort = base
		cfg.MaxInstances = 2
		s := start(t, cfg)
		in, reason := s.newInstance(netip.Addr{}, 0, s.now())
		if in == nil {
			t.Fatal(reason)
		}
		lobby, inst := rcvbuf(t, s.conn.UDPConn), rcvbuf(t, in.conn.UDPConn)
		if inst != lobby {
			t.Errorf("base %d: instance SO_RCVBUF %d, lobby %d", base, inst, lobby)
		}
		if lobby == osDefault {
			t.Logf("SO_RCVBUF capped at the OS default %d (not root, rmem_max): cannot tell apart", lobby)
		} else if inst == osDefault {
			t.Errorf("base %d: instance kept the OS default %d", base, inst)
		}
	}
}
