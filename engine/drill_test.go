//go:build linux

package engine

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// drillServerEnv makes the test binary, run again as TestDrillServer, the
// reference server's UDP lobby at the address it holds: a real server in
// a process of its own, for the drill to kill, stop and restart.
const drillServerEnv = "ENGINE_DRILL_SERVER"

func TestDrillServer(t *testing.T) {
	addr := os.Getenv(drillServerEnv)
	if addr == "" {
		t.Skip("the drill's server, run by TestDrill as a process of its own")
	}
	cfg, err := refserver.Loopback().Only(udpwire.ProtocolName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	refudp.ConfigOf(cfg).Addr = addr
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("serving at", srv.Addr(udpwire.ProtocolName))
	time.Sleep(2 * time.Minute) // bounded: the test stops it long before
	os.Exit(0)
}

// freeUDP returns a loopback UDP address nothing listens on now, picked
// with quietport: the owned server binds it (again after each restart),
// and a port let go by the kernel can be taken by another test between.
func freeUDP(t *testing.T) netip.AddrPort {
	t.Helper()
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(quietport.Pick(t, "udp", 1)))
}

// ownedServer starts the drill's server as lobbybench's owned target; with
// failRestart, the command's second start fails (exit 3) instead.
func ownedServer(t *testing.T, addr netip.AddrPort, failRestart bool) *owned.Process {
	t.Helper()
	proto, ok := simclient.Describe("udp-lobby")
	if !ok {
		t.Fatal("no udp-lobby client")
	}
	cmd := fmt.Sprintf("%q -test.run=^TestDrillServer$", os.Args[0])
	if failRestart {
		marker := filepath.Join(t.TempDir(), "started")
		cmd = fmt.Sprintf("sh -c 'if [ -e %q ]; then echo second start refused >&2; exit 3; fi; touch %q; exec %s'", marker, marker, cmd)
	}
	p, err := owned.Start(context.Background(), owned.Spec{
		Command: cmd,
		Env:     []string{drillServerEnv + "=" + addr.String()},
		Addr:    addr.String(),
		Ready: func(ctx context.Context) error {
			_, err := proto.Reach(ctx, addr, udpclient.Options{HeaderProfile: "spec"}, 300*time.Millisecond)
			return err
		},
		ReadyTimeout: 20 * time.Second,
		Grace:        2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}

func drillPlan(t *testing.T, addr netip.AddrPort, d time.Duration) *scenario.Plan {
	t.Helper()
	plan, err := scenario.Parse("drill.yaml", []byte(fmt.Sprintf(`
protocol: udp-lobby
target: %s
seed: 1
defaults: {timeout: 300ms, retries: 0}
load: {model: closed, clients: 4, duration: %s}
flows:
  - name: play
    group_size: 2
    new_socket: true
    steps:
      - create_room: {only: leader}
      - join: {room: created, only: members}
      - hello
      - ping: {count: 3, interval: 50ms}
      - list_rooms
`, addr, d)))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestDrill runs a recovery drill against the reference server as an
// owned process: a kill -9 it is restarted from and a one-second
// SIGSTOP both recover (6 s of load), with their recovery, the success rate back and
// no room leaked; a kill whose restart fails is TARGET DOWN.
func TestDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and runs 5 s of load")
	}
	waitsInParallel(t)
	// Room for the success rate to come back after the stop: requests
	// sent while it held the server time out up to a second after it.
	const length = 6 * time.Second
	for _, tc := range []struct {
		name        string
		failRestart bool
		faults      []owned.Fault
		recovered   []bool
	}{
		{"kill and stop recover", false, []owned.Fault{
			{At: time.Second, Kill: "SIGKILL"},
			{At: 3 * time.Second, Stop: time.Second},
		}, []bool{true, true}},
		{"restart fails", true, []owned.Fault{
			{At: time.Second, Kill: "SIGKILL"},
		}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitsInParallel(t)
			addr := freeUDP(t)
			p := ownedServer(t, addr, tc.failRestart)
			res, err := Run(context.Background(), Config{
				Plan: drillPlan(t, addr, length), Owned: p, Faults: tc.faults,
				Watchdog: 100 * time.Millisecond, WatchdogTimeout: 250 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Run.Drill
			if d == nil || len(d.Faults) != len(tc.faults) {
				t.Fatalf("drill %+v, want %d faults", d, len(tc.faults))
			}
			hl := res.Run.Headline()
			t.Log(hl.Text)
			for _, line := range append(d.Lines(), reports.OutageLines(res.Run)...) {
				t.Log(line)
			}
			for i, f := range d.Faults {
				want := tc.faults[i]
				if f.Fault != want.String() {
					t.Errorf("fault %d is %q, want %q", i, f.Fault, want)
				}
				if f.AtNS < want.At || f.AtNS >= length {
					t.Errorf("fault %d applied at %s, want from %s, before the end", i, f.AtNS, want.At)
				}
				if !f.WentDown {
					t.Errorf("fault %d: the watchdog never saw the target down: %s", i, f.Line())
				}
				if f.Recovered != tc.recovered[i] {
					t.Fatalf("fault %d recovered %v, want %v: %s", i, f.Recovered, tc.recovered[i], f.Line())
				}
				tagged := 0
				for _, o := range res.Run.Outages {
					if o.Fault == f.Fault {
						tagged++
					}
				}
				if tagged == 0 {
					t.Errorf("fault %d: no outage tagged with it in %+v", i, res.Run.Outages)
				}
				if !f.Recovered {
					if f.Error == "" || f.SuccessBack {
						t.Errorf("fault %d not recovered yet error %q, success back %v", i, f.Error, f.SuccessBack)
					}
					continue
				}
				if f.Error != "" {
					t.Errorf("fault %d: error %s", i, f.Error)
				}
				if f.RecoveredAfterNS <= 0 || f.AtNS+f.RecoveredAfterNS >= length+time.Second {
					t.Errorf("fault %d answers again after %s, want within the run", i, f.RecoveredAfterNS)
				}
				if !f.SuccessBack || f.SuccessBackAfterNS < f.RecoveredAfterNS || i == 0 && f.BaselineSeconds == 0 {
					t.Errorf("fault %d: success rate not back after the recovery: %s", i, f.Line())
				}
				if i > 0 && f.AtNS <= d.Faults[i-1].AtNS+d.Faults[i-1].RecoveredAfterNS {
					t.Errorf("fault %d at %s before the previous one recovered", i, f.AtNS)
				}
			}
			if tc.failRestart {
				if hl.Status != result.StatusTargetDown || !strings.Contains(hl.Text, "drill: 1 fault, 1 not recovered") {
					t.Errorf("headline %q, want TARGET DOWN and the fault not recovered", hl.Text)
				}
				if d.Rooms != nil {
					t.Errorf("rooms checked on a dead target: %+v", d.Rooms)
				}
				return
			}
			if hl.Status == result.StatusTargetDown || !strings.Contains(hl.Text, "drill: 2 faults, all recovered (answering again after:") {
				t.Errorf("headline %q, want the drill recovered and not TARGET DOWN", hl.Text)
			}
			if d.Faults[0].SessionsLost == 0 {
				t.Errorf("no session lost to kill -9 mid-run: %s", d.Faults[0].Line())
			}
			r := d.Rooms
			if r == nil || r.Error != "" || r.Listed == 0 || r.Answered != r.Probed || len(r.Dead) != 0 {
				t.Errorf("rooms after the run %+v, want some listed, all answering", r)
			}
			if s := res.Run.TimeSeries; len(s) == 0 {
				t.Error("no time series")
			}
		})
	}
}

// TestDrillNeedsOwned: faults without an owned target are refused.
func TestDrillNeedsOwned(t *testing.T) {
	_, err := Run(context.Background(), Config{Plan: drillPlan(t, freeUDP(t), time.Second), Faults: []owned.Fault{{At: time.Second, Stop: time.Second}}})
	if err == nil || !strings.Contains(err.Error(), "target_cmd") {
		t.Fatalf("err %v, want faults refused without an owned target", err)
	}
}
