package vflow

import (
	"net/netip"
	"testing"
)

// TestCanReach: flows reach servers on IPv4 loopback only.
func TestCanReach(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"127.201.3.4", true},
		{"::ffff:127.0.0.1", true},
		{"10.1.2.3", false},
		{"192.0.2.7", false},
		{"::1", false},
		{"0.0.0.0", false},
	} {
		err := CanReach(netip.MustParseAddr(tc.addr))
		if (err == nil) != tc.ok {
			t.Errorf("CanReach(%s) = %v, want reachable %v", tc.addr, err, tc.ok)
		}
	}
}
