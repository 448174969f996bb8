package simclient

import (
	"errors"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/scenario"
)

// TestResolveFlows: which mode runs, the note auto says, and the error of
// virtual flows that cannot run, for each reason they cannot.
func TestResolveFlows(t *testing.T) {
	noPriv := errors.New("vflow: opening the raw socket needs CAP_NET_RAW; run as root")
	tests := []struct {
		name      string
		proto     scenario.ProtocolName
		mode      scenario.FlowsMode
		apart     string
		avail     error
		want      scenario.FlowsMode
		wantNote  string // a part of the note ("" : none)
		wantError string // a part of the error ("": none)
	}{
		{name: "default", proto: "udp-lobby", mode: "", want: scenario.FlowsSockets},
		{name: "sockets, unprivileged", proto: "udp-lobby", mode: scenario.FlowsSockets, avail: noPriv, want: scenario.FlowsSockets},
		{name: "virtual", proto: "udp-lobby", mode: scenario.FlowsVirtual, want: scenario.FlowsVirtual},
		{name: "virtual, unprivileged", proto: "udp-lobby", mode: scenario.FlowsVirtual, avail: noPriv, wantError: "CAP_NET_RAW"},
		{name: "virtual, tcp-lobby", proto: "tcp-lobby", mode: scenario.FlowsVirtual, wantError: "tcp-lobby runs over TCP"},
		{name: "virtual, leviathan", proto: "leviathan", mode: scenario.FlowsVirtual, want: scenario.FlowsVirtual},
		{name: "virtual, workers", proto: "udp-lobby", mode: scenario.FlowsVirtual, apart: "--workers: x", wantError: "--workers"},
		{name: "auto", proto: "udp-lobby", mode: scenario.FlowsAuto, want: scenario.FlowsVirtual, wantNote: "flows auto: virtual"},
		{name: "auto, unprivileged", proto: "udp-lobby", mode: scenario.FlowsAuto, avail: noPriv, want: scenario.FlowsSockets, wantNote: "sockets, as virtual flows cannot run: vflow: opening the raw socket"},
		{name: "auto, tcp-lobby", proto: "tcp-lobby", mode: scenario.FlowsAuto, want: scenario.FlowsSockets, wantNote: "runs over TCP"},
		{name: "auto, workers", proto: "udp-lobby", mode: scenario.FlowsAuto, apart: "--workers: x", want: scenario.FlowsSockets, wantNote: "--workers"},
	}
	defer func(f func() error) { vflowAvailable = f }(vflowAvailable)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vflowAvailable = func() error { return tc.avail }
			got, note, err := ResolveFlows(tc.proto, tc.mode, tc.apart)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("mode %q, want %q", got, tc.want)
			}
			if (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("note %q, want one saying %q", note, tc.wantNote)
			}
		})
	}
}
