package conformance

import (
	"testing"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	reflev "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/result"
)

func startRefLeviathan(t testing.TB, edit func(*reflev.Config)) *reflev.Server {
	t.Helper()
	cfg := reflev.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.MaxPlayers = 8
	cfg.SocketBuffer = 0
	if edit != nil {
		edit(&cfg)
	}
	s, err := reflev.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestReferenceLeviathan runs the Leviathan group against the reference
// endpoint, and against endpoints configured to show one engine-like
// deviation each: every case passes except those meant to flag the
// deviation, which warn (or fail), and no other.
func TestReferenceLeviathan(t *testing.T) {
	// Parallel with the other Leviathan suite test: both mostly wait out
	// case timeouts (the package CPU time is a few seconds), which halves
	// the package's wall time under -race.
	t.Parallel()
	setups := []struct {
		name string
		edit func(*reflev.Config)
		want map[string]string // cases with another verdict than pass
	}{
		{"defaults", nil, nil},
		{"seed ack reading", func(c *reflev.Config) { c.Conn.AckReading = lv.AckSeedPlusOne }, map[string]string{"leviathan/4/2": result.VerdictWarn, "leviathan/4/6": result.VerdictWarn}},
		{"3 transmissions", func(c *reflev.Config) { c.Conn = levconn.Config{MaxInFlight: 32, CriticalTransmissions: 3} }, map[string]string{"leviathan/4/4": result.VerdictWarn}},
		{"not accepting", func(c *reflev.Config) { c.NotAccepting = true }, map[string]string{
			// JoinServer is refused (reason 3, checked first): the join
			// cases cannot run and say so.
			"leviathan/3/2": result.VerdictSkip, "leviathan/3/3": result.VerdictSkip, "leviathan/3/6": result.VerdictSkip, "leviathan/3/7": result.VerdictSkip,
		}},
	}
	cfgs := make([]Config, len(setups))
	for i, s := range setups {
		srv := startRefLeviathan(t, s.edit)
		cfgs[i] = Config{Target: srv.Addr().String(), Protocol: protoLeviathan, Timeout: levSuiteTimeout}
	}
	reps, errs := runSuites(cfgs)
	for i, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			rep, err := reps[i], errs[i]
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Cases) < 20 {
				t.Fatalf("%d leviathan cases ran", len(rep.Cases))
			}
			for _, x := range rep.Cases {
				want, ok := s.want[x.ID]
				if !ok {
					want = result.VerdictPass
					if x.Level == result.LevelInfo {
						want = result.VerdictInfo
					}
				}
				if x.Verdict != want {
					t.Errorf("%s is %v, want %v: expected %s, actual %s", x.ID, x.Verdict, want, x.Expected, x.Actual)
				}
			}
			if t.Failed() || testing.Verbose() {
				logReport(t, rep)
			}
		})
	}
}
