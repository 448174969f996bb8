package simclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/liveness"
)

// twoPortTarget is a UDP target on 127.0.0.1 that, for every datagram it
// receives, first has another socket of its host (another port) send
// other to the sender, then answers own from its own port (nil: silent on
// either). Loopback queues a datagram at once, so the other port's
// always comes first.
func twoPortTarget(t *testing.T, own, other []byte) netip.AddrPort {
	t.Helper()
	lo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	tgt, err := net.ListenUDP("udp4", lo)
	if err != nil {
		t.Fatal(err)
	}
	side, err := net.ListenUDP("udp4", lo)
	if err != nil {
		tgt.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { tgt.Close(); side.Close(); <-done })
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			_, from, err := tgt.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if other != nil {
				side.WriteToUDPAddrPort(other, from)
			}
			if own != nil {
				tgt.WriteToUDPAddrPort(own, from)
			}
		}
	}()
	return tgt.LocalAddr().(*net.UDPAddr).AddrPort()
}

// TestDatagramReachOwnPortFirst: a datagram from another port of the
// target's host answers the check only when the target's own port stays
// silent and Mine (if set) takes it; a garbled answer from the target's
// own port is the verdict even after a valid one from another port (a
// stray meant for the check's port's earlier holder, as a Leviathan
// server's resend once made a garbage server read as "answers from
// another port").
func TestDatagramReachOwnPortFirst(t *testing.T) {
	valid, junk := []byte("valid"), []byte("junk")
	for _, tc := range []struct {
		name       string
		own, other []byte
		mine       func([]byte) bool
		samePort   string
		want       string // "" for reachable; else what the error says
		garbled    bool
	}{
		{"own port answers", valid, junk, nil, "", "", false},
		{"own port garbled, another port valid first", junk, valid, nil, "", "drew only", true},
		{"only another port answers", nil, valid, nil, "", "", false},
		{"only another port answers, clients need the same port", nil, valid, nil, "connected socket", "from another port", false},
		{"another port's datagram is not the check's", nil, valid, func([]byte) bool { return false }, "", "from other ports of its host answered none", false},
		{"another port sends junk", nil, junk, nil, "", "from other ports of its host answered none", false},
		{"silence", nil, nil, nil, "", "no reply to a probe within", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := twoPortTarget(t, tc.own, tc.other)
			r := DatagramReach{
				What:     "a probe",
				Packets:  func(int) [][]byte { return [][]byte{[]byte("probe")} },
				Judge:    func(b []byte) (bool, error) { return string(b) == "valid", nil },
				Mine:     tc.mine,
				SamePort: tc.samePort,
			}
			err := r.Run(context.Background(), addr, 300*time.Millisecond)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Run = %v, want reachable", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Run = %v, want an error saying %q", err, tc.want)
			}
			if got := errors.Is(err, liveness.ErrGarbled); got != tc.garbled {
				t.Errorf("Run = %v: garbled %v, want %v", err, got, tc.garbled)
			}
		})
	}
}
