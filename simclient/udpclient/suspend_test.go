package udpclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/simclient"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// TestSuspendResume: with Options.Suspend, a session gives up its
// goroutine in every pause of at least simclient.SuspendMin (Run or
// Resume returns ErrSuspended; the pauses here are 20 times that, so a
// busy machine does not shorten them below it) and goes on where it
// paused when resumed:
// a think step continues with the next step, a ping series with its next
// ping, on the series' own schedule (the pauses end exactly interval
// apart). The flow then completes as it would without suspending.
func TestSuspendResume(t *testing.T) {
	tests := []struct {
		name, flow string
		// wantSusp is the number of suspensions; spacing, when set, the
		// exact distance between successive pause ends.
		wantSusp int
		spacing  time.Duration
		counts   map[udplobby.MsgType]int
	}{
		{"think steps", `
  - name: poller
    steps: [list_rooms, {think: 200ms}, list_rooms, {think: 200ms}, list_rooms]
`, 2, 0, map[udplobby.MsgType]int{udplobby.LobbyListRooms: 3}},
		{"ping series", `
  - name: pinger
    steps:
      - create_room
      - join: {room: created}
      - hello
      - instance_join
      - ping: {count: 4, interval: 200ms}
      - list_rooms
`, 3, 200 * time.Millisecond, map[udplobby.MsgType]int{udplobby.ClientPing: 4, udplobby.LobbyListRooms: 1}},
		{"short pauses do not suspend", `
  - name: pinger
    steps: [list_rooms, {think: 1ms}, list_rooms]
`, 0, 0, map[udplobby.MsgType]int{udplobby.LobbyListRooms: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeLobby(t, udplobby.ProfileSpec)
			p := plan(t, "", tc.flow)
			s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true})
			r := s.(simclient.Resumer)
			ctx := context.Background()
			var ends []time.Time
			err := s.Run(ctx, time.Now())
			for err == simclient.ErrSuspended && len(ends) < 10 {
				ends = append(ends, r.SuspendedUntil())
				err = r.Resume(ctx)
			}
			if err != nil {
				t.Fatalf("the flow ended with %v after %d suspensions", err, len(ends))
			}
			if len(ends) != tc.wantSusp {
				t.Errorf("%d suspensions, want %d", len(ends), tc.wantSusp)
			}
			for k := 1; tc.spacing > 0 && k < len(ends); k++ {
				if d := ends[k].Sub(ends[k-1]); d != tc.spacing {
					t.Errorf("pause %d ends %v after pause %d, want %v: the series' schedule moved", k, d, k-1, tc.spacing)
				}
			}
			for typ, n := range tc.counts {
				if got := f.count(typ); got != n {
					t.Errorf("server saw %d %v, want %d", got, typ, n)
				}
			}
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if run.Totals.Failures != 0 || run.Totals.Violations != 0 {
				t.Errorf("failures %d, violations %d, want none", run.Totals.Failures, run.Totals.Violations)
			}
		})
	}
}

// TestSuspendedStop: a session suspended in a pause when the stop signal
// fires ends, when resumed, as a pause the stop ends does (ErrStopped; the
// pause cut, not failed), without sending anything more.
func TestSuspendedStop(t *testing.T) {
	f := newFakeLobby(t, udplobby.ProfileSpec)
	p := plan(t, "", `
  - name: idler
    steps: [list_rooms, {think: 1h}, list_rooms]
`)
	s, c := oneSession(t, p, f.addr(), simclient.Options{Suspend: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop, fire := context.WithCancel(ctx)
	rctx := simclient.WithStop(ctx, stop)
	if err := s.Run(rctx, time.Now()); err != simclient.ErrSuspended {
		t.Fatalf("Run = %v, want ErrSuspended", err)
	}
	fire()
	if err := s.(simclient.Resumer).Resume(rctx); !errors.Is(err, simclient.ErrStopped) {
		t.Fatalf("Resume after the stop = %v, want ErrStopped", err)
	}
	if n := f.count(udplobby.LobbyListRooms); n != 1 {
		t.Errorf("server saw %d lists, want 1", n)
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if run.Totals.Failures != 0 {
		t.Errorf("%d failures, want 0: a pause the stop ends is cut", run.Totals.Failures)
	}
}
