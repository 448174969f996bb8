package sockbuf

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func bufs(t *testing.T, c *net.UDPConn) (rcv, snd int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		rcv, _ = syscall.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		snd, _ = syscall.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	return rcv, snd
}

func TestSet(t *testing.T) {
	tests := []struct {
		name     string
		set      func(syscall.Conn, int) error
		n        int
		growRcv  bool // the receive buffer must grow past its default
		growSend bool
	}{
		{"both", Set, 8 << 20, true, true},
		{"read only", SetRead, 8 << 20, true, false},
		{"zero does nothing", Set, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rcv0, snd0 := bufs(t, c)
			if err := tt.set(c, tt.n); err != nil {
				t.Fatalf("set: %v", err)
			}
			rcv, snd := bufs(t, c)
			// The kernel doubles the value and caps the plain option at
			// rmem_max, so only "grew" and "unchanged" are portable checks.
			if (rcv > rcv0) != tt.growRcv {
				t.Errorf("SO_RCVBUF %d -> %d, grow = %v", rcv0, rcv, tt.growRcv)
			}
			if (snd > snd0) != tt.growSend {
				t.Errorf("SO_SNDBUF %d -> %d, grow = %v", snd0, snd, tt.growSend)
			}
		})
	}
}
