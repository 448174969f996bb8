package engine

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// TestWorkersTargetGone: a target that answers the parent's check and is
// gone before the workers' leaves no worker a result; the run is then an
// *UnreachableError (exit 3, a result file saying so), as when it was
// gone before the parent's check, not an error of the run's making
// (exit 2). A target never there is refused before any worker starts.
func TestWorkersTargetGone(t *testing.T) {
	for _, tt := range []struct {
		name     string
		upFirst  bool
		commands int // the worker commands made
	}{
		{"gone after the parent's check", true, 1},
		{"never there", false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := refserver.Loopback().Only(udpwire.ProtocolName)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := refserver.Start(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			addr := srv.Addr(udpwire.ProtocolName)
			if !tt.upFirst {
				srv.Close()
			}
			defer srv.Close()
			plan, err := scenario.Parse("gone.yaml", []byte(fmt.Sprintf("protocol: udp-lobby\ntarget: %s\nload: {rate: 10/s, duration: 1s}\nflows: [{steps: [list_rooms]}]\n", addr)))
			if err != nil {
				t.Fatal(err)
			}
			dir, made := t.TempDir(), 0
			w := Workers{Config: Config{Plan: plan}, N: 1,
				Command: func(Shard, string, netip.AddrPort) *exec.Cmd {
					made++
					srv.Close()                 // gone before the worker looks
					return exec.Command("true") // ends without a result
				},
				ShardPath: func(s Shard) string { return filepath.Join(dir, "shard.json") },
			}
			_, err = RunWorkers(context.Background(), w)
			var unreach *UnreachableError
			if !errors.As(err, &unreach) || made != tt.commands {
				t.Errorf("RunWorkers: %v after %d worker commands; want an UnreachableError after %d", err, made, tt.commands)
			}
		})
	}
}
