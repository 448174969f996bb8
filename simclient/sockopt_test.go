//go:build linux

package simclient

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSetBuffers(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(opt int) int {
		rc, _ := c.SyscallConn()
		var v int
		rc.Control(func(fd uintptr) { v, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt) })
		return v
	}
	before := get(unix.SO_RCVBUF)
	if err := SetBuffers(c, 8<<20); err != nil {
		t.Fatal(err)
	}
	rcv, snd := get(unix.SO_RCVBUF), get(unix.SO_SNDBUF)
	// Linux doubles the value it stores; without privileges it caps it at
	// rmem_max/wmem_max, which may equal the default.
	if rcv < before || snd <= 0 {
		t.Fatalf("SO_RCVBUF %d → %d, SO_SNDBUF %d", before, rcv, snd)
	}
	if unix.Geteuid() == 0 && rcv < 8<<20 {
		t.Fatalf("as root SO_RCVBUFFORCE should give ≥ 8 MiB, got %d", rcv)
	}
	if err := SetBuffers(c, 0); err != nil {
		t.Fatal(err)
	}
}
