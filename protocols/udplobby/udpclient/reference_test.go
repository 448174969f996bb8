package udpclient

import (
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

func referenceServer(t testing.TB, edit func(*udpserver.Config)) *udpserver.Server {
	t.Helper()
	cfg := udpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.BasePort = 0
	cfg.CountdownInterval = 5 * time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	srv, err := udpserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestFullMatchAgainstReference plays the full-match flow against the
// bundled reference server in both header profiles: no violation, no
// failure.
func TestFullMatchAgainstReference(t *testing.T) {
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) {
			srv := referenceServer(t, func(c *udpserver.Config) { c.Profile = prof })
			p := plan(t, "header_profile: auto\ndefaults: {timeout: 200ms, retry_interval: 10ms}", `
  - group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - list_rooms
      - hello
      - instance_join
      - barrier: 4
      - ready
      - ping: {count: 3, interval: 1ms}
      - wait_game_start: 5s
      - leave
`)
			r := runSessions(t, p, srv.Addr(), 8, simclient.Options{})
			for i, err := range r.errs {
				if err != nil {
					t.Errorf("session %d: %v", i, err)
				}
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations against the reference server: %v (%+v)", v, r.run.Violations)
			}
			if st := r.step(t, "wait_game_start"); st.Successes != 8 {
				t.Errorf("wait_game_start successes %d", st.Successes)
			}
		})
	}
}

// TestRateProbeAgainstReference finds the reference server's per-IP limit.
func TestRateProbeAgainstReference(t *testing.T) {
	srv := referenceServer(t, func(c *udpserver.Config) { c.RateLimit = 100; c.RateBurst = 10 })
	p := plan(t, "", `  - steps:
      - rate_probe: {from: 50/s, to: 400/s, over: 1s, timeout: 100ms, retries: 0, loss: 5%}
`)
	r := runSessions(t, p, srv.Addr(), 1, simclient.Options{})
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	fd := r.run.RateLimits[0]
	if fd.ObservedLimitPerSec < 70 || fd.ObservedLimitPerSec > 130 || fd.Limited == 0 {
		t.Fatalf("finding %+v, want a limit near 100/s", fd)
	}
}
