package main

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
)

// parseConformFlags parses conform's flags from args as the command does,
// nothing run.
func parseConformFlags(t *testing.T, args ...string) *conformFlags {
	t.Helper()
	f, _, _ := parseOptions(t, addConformFlags, args...)
	return f
}

// TestConformFlagsConfig checks the conformance.Config conform's flags
// make, nothing run: each flag in its field, in the Config's spelling.
func TestConformFlagsConfig(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, c conformance.Config)
	}{
		{"defaults", nil, func(t *testing.T, c conformance.Config) {
			if c.Protocol != conformance.DefaultProtocol() || c.Timeout != conformance.DefaultTimeout || c.MaxFill != conformance.DefaultMaxFill || c.PoolWait != conformance.DefaultPoolWait || c.Patterns != nil || c.Sources != nil || c.Strict {
				t.Errorf("config %+v: want the defaults", c)
			}
		}},
		{"pool-wait 0 is Config's no wait", []string{"--pool-wait", "0s"}, func(t *testing.T, c conformance.Config) {
			if c.PoolWait != -1 {
				t.Errorf("PoolWait %v, want -1", c.PoolWait)
			}
		}},
		{"flags", []string{"--target", "127.0.0.1:9000", "--protocol", "tcp-lobby", "--strict", "--timeout", "2s", "--max-fill", "7", "--pool-wait", "3s", "--cases", "tcp-lobby/1, tcp-lobby/2*", "--source-addrs", "127.0.0.1-127.0.0.2"}, func(t *testing.T, c conformance.Config) {
			if c.Target != "127.0.0.1:9000" || c.Protocol != "tcp-lobby" || !c.Strict || c.Timeout != 2*time.Second || c.MaxFill != 7 || c.PoolWait != 3*time.Second {
				t.Errorf("config %+v: want the flags' values", c)
			}
			if want := []string{"tcp-lobby/1", "tcp-lobby/2*"}; !slices.Equal(c.Patterns, want) {
				t.Errorf("Patterns %q, want %q", c.Patterns, want)
			}
			if want := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}; !slices.Equal(c.Sources, want) {
				t.Errorf("Sources %v, want %v", c.Sources, want)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConformFlags(t, tc.args...).config()
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			tc.check(t, c)
		})
	}
}

// TestConformFlagsConfigErrors checks conform's refusals of a bad flag,
// each naming its flag, before any target is needed (a listing's) and
// after (a run's).
func TestConformFlagsConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the error; a prefix when it ends in ": "
	}{
		{"max-skips", []string{"--max-skips", "-2"}, "--max-skips -2 must be 0 or more"},
		{"max-fill 0", []string{"--max-fill", "0"}, "--max-fill 0 is outside 1-4096"},
		{"timeout 0", []string{"--timeout", "0s"}, "--timeout: must be positive, got 0s"},
		{"pool-wait negative", []string{"--pool-wait", "-1s"}, "--pool-wait: must be 0 or more, got -1s"},
		{"a bad source", []string{"--source-addrs", "nowhere"}, "--source-addrs: "},
		{"a bad pattern", []string{"--cases", "udp-lobby/["}, "--cases: "},
		{"no target", nil, "--target is required (host:port)"},
		{"target-log without a command", []string{"--target-log", "x.log", "--target", "127.0.0.1:9000"}, "--target-log needs --target-cmd"},
		{"target-cmd without a target", []string{"--target-cmd", "srv"}, "--target-cmd needs --target HOST:PORT: the address the started server answers at"},
		{"a bad target", []string{"--target", "127.0.0.1"}, "--target: "},
		{"no case selected", []string{"--target", "127.0.0.1:9000", "--protocol", "udp-lobby", "--cases", "udp-lobby/999"}, `--cases: no udp-lobby case matches "udp-lobby/999"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := parseConformFlags(t, tc.args...)
			c, err := f.config()
			if err == nil {
				err = f.checkRun(context.Background(), &c)
			}
			got := errText(err)
			if prefix := strings.HasSuffix(tc.want, ": "); got != tc.want && !(prefix && strings.HasPrefix(got, tc.want)) {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}
