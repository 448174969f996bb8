//go:build linux

package vflow

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

const allCaps = 1<<capNetRaw | 1<<capBPF | 1<<capNetAdmin

// TestAvailableSays: each missing privilege or feature is named, with how
// to grant it.
func TestAvailableSays(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   uint64
		probe  error
		want   []string // every one in the message; none: nil error
		absent []string
	}{
		{name: "all granted", caps: allCaps},
		{name: "CAP_SYS_ADMIN stands for CAP_BPF", caps: 1<<capNetRaw | 1<<capSysAdmin | 1<<capNetAdmin},
		{name: "no CAP_NET_RAW", caps: allCaps &^ (1 << capNetRaw),
			want: []string{"needs CAP_NET_RAW (the raw socket", "setcap cap_net_raw,cap_bpf,cap_net_admin+ep", "securityContext"}, absent: []string{"CAP_BPF", "CAP_NET_ADMIN"}},
		{name: "no CAP_BPF", caps: allCaps &^ (1 << capBPF),
			want: []string{"needs CAP_BPF (the SOCKMAP", "run as root"}, absent: []string{"CAP_NET_RAW", "CAP_NET_ADMIN"}},
		{name: "none", caps: 0,
			want: []string{"CAP_NET_RAW", "CAP_BPF", "CAP_NET_ADMIN"}},
		{name: "old kernel", caps: allCaps, probe: fmt.Errorf("sk_lookup: %w", ebpf.ErrNotSupported),
			want: []string{"has no BPF sk_lookup programs", "Linux 5.9 or later"}, absent: []string{"setcap"}},
		{name: "load refused", caps: allCaps, probe: unix.EPERM,
			want: []string{"loading a BPF sk_lookup program needs CAP_BPF", "CAP_NET_ADMIN", "operation not permitted", "setcap"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := system{
				capEff: func() (uint64, error) { return tc.caps, nil },
				probe:  func() error { return tc.probe },
			}
			err := sys.available()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unavailable: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("available, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(err.Error(), a) {
					t.Errorf("%q names %q, which is not missing", err, a)
				}
			}
		})
	}
}

// TestOpenAttachRefused: a kernel refusing the attach (faked: EPERM) makes
// Open say CAP_NET_ADMIN is missing and how to grant it, and leave nothing
// open (the same range opens after).
func TestOpenAttachRefused(t *testing.T) {
	needPrivileges(t)
	sys := linux
	sys.attach = func(int, *ebpf.Program) (closer, error) { return nil, unix.EPERM }
	cfg := Config{Addrs: netip.MustParsePrefix("127.209.0.0/24"), Ports: netrange.PortRange{First: 26000, Last: 26099}}
	f, err := sys.open(cfg)
	if err == nil {
		f.Close()
		t.Fatal("opened with the attach refused")
	}
	var pe *PrivilegeError
	if !errors.As(err, &pe) || !errors.Is(err, unix.EPERM) {
		t.Fatalf("%v (%T), want a PrivilegeError wrapping EPERM", err, err)
	}
	for _, w := range []string{"attaching the sk_lookup program to the network namespace needs CAP_NET_ADMIN", "setcap"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	openFlows(t, cfg) // the failed Open closed its socket on the range's first address:port
}

// TestAvailableHere: on this machine Available agrees with Open.
func TestAvailableHere(t *testing.T) {
	aerr := Available()
	f, oerr := Open(Config{Addrs: netip.MustParsePrefix("127.210.0.0/24"), Ports: netrange.PortRange{First: 27000, Last: 27099}})
	if oerr == nil {
		f.Close()
	}
	if (aerr == nil) != (oerr == nil) {
		t.Errorf("Available: %v; Open: %v", aerr, oerr)
	}
}
