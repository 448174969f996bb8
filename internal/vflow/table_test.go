package vflow

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

// flowState is a flow's state as a UDP client might keep it.
type flowState struct {
	intended int64 // the outstanding request's intended send time, ns
	seq      uint32
	phase    uint8
}

func TestTableSlots(t *testing.T) {
	cfg := Config{Addrs: netip.MustParsePrefix("127.77.0.0/30"), Ports: netrange.PortRange{First: 5000, Last: 5002}}
	tab, err := NewTable[flowState](cfg, 10) // 4 addresses x 3 ports = 12; 10 used
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int
		flow string
	}{{0, "127.77.0.0:5000"}, {1, "127.77.0.1:5000"}, {3, "127.77.0.3:5000"}, {4, "127.77.0.0:5001"}, {9, "127.77.0.1:5002"}} {
		if got := tab.Flow(tc.i); got.String() != tc.flow {
			t.Errorf("Flow(%d) = %s, want %s", tc.i, got, tc.flow)
		}
	}
	seen := map[*flowState]int{}
	for i := range tab.Len() {
		s := tab.Slot(tab.Flow(i))
		if s != tab.At(i) {
			t.Fatalf("Slot(Flow(%d)) is not slot %d", i, i)
		}
		*s = flowState{intended: int64(i) * 1000, seq: uint32(i), phase: 1}
		seen[s] = i
	}
	for i := range tab.Len() {
		if s := tab.At(i); s.seq != uint32(i) || s.intended != int64(i)*1000 || s.phase != 1 {
			t.Errorf("slot %d holds %+v after every flow wrote its own", i, *s)
		}
	}
	if len(seen) != tab.Len() {
		t.Errorf("%d distinct slots for %d flows", len(seen), tab.Len())
	}
	for _, out := range []string{"127.77.0.2:5002", "127.77.0.4:5000", "127.77.0.0:4999", "127.77.0.0:5003", "127.0.0.1:5000", "[::1]:5000"} {
		if s := tab.Slot(netip.MustParseAddrPort(out)); s != nil {
			t.Errorf("Slot(%s) = slot %d, want none", out, seen[s])
		}
	}
}

func TestNewTableRefuses(t *testing.T) {
	small := Config{Addrs: netip.MustParsePrefix("127.77.0.0/31"), Ports: netrange.PortRange{First: 5000, Last: 5001}}
	type big [65]byte
	for _, tc := range []struct {
		name string
		make func() error
		want string
	}{
		{"state over 64 bytes", func() error { _, err := NewTable[big](small, 1); return err }, "flow state vflow.big of 65 bytes exceeds 64"},
		{"more flows than the range", func() error { _, err := NewTable[flowState](small, 5); return err }, "5 flows, but range 127.77.0.0/31 ports 5000-5001 holds 1 to 4"},
		{"no flows", func() error { _, err := NewTable[flowState](small, 0); return err }, "0 flows"},
		{"bad range", func() error {
			_, err := NewTable[flowState](Config{Addrs: netip.MustParsePrefix("10.0.0.0/8")}, 1)
			return err
		}, "inside 127.0.0.0/8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.make(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
