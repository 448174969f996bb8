package protocols

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestRegister: one registration makes the protocol known to the scenario
// loader, to runs (simclient, with the descriptor's server parts as the
// embedded ones) and to the suite; a second one, or a descriptor missing
// a piece, panics.
func TestRegister(t *testing.T) {
	// The registries are process-wide and keep what is registered: a name
	// of this run's own, so -count=N works.
	name := scenario.ProtocolName(fmt.Sprintf("test-proto-%d", time.Now().UnixNano()))
	d := Descriptor{
		Scenario: scenario.ProtocolSpec{Name: name, Order: 99, Transport: "udp", Steps: []scenario.StepSpec{{Kind: "poke", Request: true}},
			ProbeRequests: []scenario.StepKind{"poke"}},
		Client: simclient.Client{
			Reach: func(context.Context, netip.AddrPort, scenario.Options, time.Duration) (scenario.Options, error) {
				return nil, nil
			},
			New: func(*simclient.Shared, int, *scenario.Flow, netip.Addr) (simclient.Session, error) { return nil, nil },
		},
		Conformance: &conformance.Group{Transport: "udp"},
		Server:      []*refserver.Part{testPart(string(name) + "-part")},
	}
	Register(d)
	if s, ok := scenario.LookupProtocol(name); !ok || s.Transport != "udp" {
		t.Errorf("the scenario loader does not know the protocol: %+v", s)
	}
	if c, ok := simclient.Describe(string(name)); !ok || c.Name != name || len(c.EmbeddedParts) != 1 || c.EmbeddedParts[0] != string(name)+"-part" {
		t.Errorf("simclient has %+v", c)
	}
	if !slices.Contains(refserver.PartNames(), string(name)+"-part") {
		t.Errorf("the reference server does not have the part: %v", refserver.PartNames())
	}
	found := false
	for _, p := range conformance.Protocols() {
		found = found || p == string(name)
	}
	if !found {
		t.Errorf("the suite does not know the protocol: %v", conformance.Protocols())
	}
	if got, ok := Lookup(string(name)); !ok || got.Conformance.Name != string(name) {
		t.Errorf("Lookup = %+v, %v", got, ok)
	}
	for _, tc := range []struct {
		name string
		d    Descriptor
	}{
		{"twice", d},
		{"no client", Descriptor{Scenario: scenario.ProtocolSpec{Name: name + "-x", Transport: "udp", Steps: d.Scenario.Steps, ProbeRequests: []scenario.StepKind{"poke"}},
			Server: []*refserver.Part{testPart(string(name) + "-x-part")}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", tc.name)
				}
			}()
			Register(tc.d)
		}()
	}
}

// testPart is a reference server part that is never started.
func testPart(name string) *refserver.Part {
	none := func() any { return new(struct{}) }
	return &refserver.Part{Name: name, Order: 99, Default: none, Loopback: none, NewStats: none,
		Off:   refserver.OffFlag{Name: "no-" + name},
		Flags: func(*refserver.Flags) func(refserver.FlagEnv) (any, error) { return nil },
		Start: func(any, *slog.Logger, map[string]any) (refserver.Running, error) {
			return nil, errors.New("not started")
		},
		Text:     func(any, io.Writer, string) error { return nil },
		Announce: func(any, netip.AddrPort) string { return "" },
	}
}
