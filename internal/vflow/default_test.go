//go:build linux

package vflow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDefaultRangesApart: two users without a range of their own (two
// runs, or two lobbybench processes) get disjoint default blocks, and each
// gets its own flows' replies.
func TestDefaultRangesApart(t *testing.T) {
	needPrivileges(t)
	a, err := OpenHub(Config{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenHub(Config{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ra, rb := a.f.Config().Addrs, b.f.Config().Addrs
	if ra.Overlaps(rb) {
		t.Fatalf("both took %s and %s", ra, rb)
	}
	srv := echoServer(t)
	for _, h := range []*Hub{a, b} {
		c, err := h.Conn()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteToUDPAddrPort([]byte("x"), srv); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, _, _, _, err := c.ReadMsgUDPAddrPort(buf, nil); err != nil || string(buf[:n]) != "x" {
			t.Errorf("flow %s of %s: read %q, %v", c.AddrPort(), h.f.Config().Addrs, buf[:n], err)
		}
	}
}

// TestOpenFreeTakesNextBlock: a default block whose socket is held is
// passed over; when every one is, the error names the span and the fix.
func TestOpenFreeTakesNextBlock(t *testing.T) {
	held := func(n int) func(Config) (*Flows, error) {
		return func(c Config) (*Flows, error) {
			if c.Addrs == defaultBlock(n) {
				return &Flows{cfg: c}, nil
			}
			return nil, fmt.Errorf("vflow: opening the steered socket: %w", unix.EADDRINUSE)
		}
	}
	f, err := openFree(Config{}, held(2))
	if err != nil || f.cfg.Addrs.String() != "127.79.0.0/16" {
		t.Fatalf("got %v, %v: want the third block, 127.79.0.0/16", f, err)
	}
	_, err = openFree(Config{}, held(DefaultBlocks))
	if err == nil || !strings.Contains(err.Error(), "127.77.0.0/16 to 127.124.0.0/16") || !strings.Contains(err.Error(), "range of its own") {
		t.Fatalf("every block held: %v", err)
	}
	other := fmt.Errorf("vflow: attaching: %w", unix.EPERM)
	if _, err := openFree(Config{}, func(Config) (*Flows, error) { return nil, other }); err != other {
		t.Fatalf("a refusal other than a held address: %v, want it as it is", err)
	}
}
