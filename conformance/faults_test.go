package conformance

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// suiteConfig is the configuration the fault tests run the suite with: a
// smaller flood than the CLI default, since several suites run at once on a
// small machine.
func suiteConfig(target string, pr PortRange) Config {
	return Config{
		Target: target, Protocol: ProtoUDP, Header: HeaderAuto, InstancePorts: pr,
		Timeout: 2 * time.Second, FloodRate: 5000, FloodDuration: 200 * time.Millisecond,
	}
}

func runSuite(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func reportText(r *Report) string {
	var b bytes.Buffer
	WriteText(&b, r, TextOptions{})
	return b.String()
}

// limited is the rate limit every fault server but one runs with: 100
// requests/s per IP with a small burst, so every fault test also proves the
// suite's verdicts hold against a rate-limiting server.
var limited = faults{rateLimit: 100, rateBurst: 20}

func TestFaultInjection(t *testing.T) {
	base := startTestLobby(t, limited, 12)
	baseline := runSuite(t, suiteConfig(base.addr().String(), base.portRange()))
	for _, x := range baseline.Results {
		if x.Verdict != Pass && x.Verdict != InfoVerdict {
			t.Errorf("correct rate-limited server: %s is %v, want pass: %s\n%s", x.Case.ID, x.Verdict, x.Actual, reportText(baseline))
		}
	}
	if t.Failed() {
		return
	}
	baseVerdict := map[string]Verdict{}
	for _, x := range baseline.Results {
		baseVerdict[x.Case.ID] = x.Verdict
	}

	with := func(f faults) faults { f.rateLimit, f.rateBurst = limited.rateLimit, limited.rateBurst; return f }
	listReaders := []string{"udp/5", "udp/10", "inst/2"}
	tests := []struct {
		name string
		f    faults
		// caught are the cases meant for the defect (patterns): each must
		// fail (MUST) or warn (SHOULD).
		caught []string
		// mayskip are cases that may be skipped instead of keeping their
		// baseline verdict (their precondition rests on the broken part).
		mayskip []string
		// actual maps a caught case to a substring its Actual must hold.
		actual map[string]string
	}{
		{"no CRC check", with(faults{noCRCCheck: true}), []string{"udp/13/2", "udp/13/3", "udp/13/4"}, nil, nil},
		{"CRC little-endian", with(faults{crcLittleEndian: true}), []string{"udp/3/1", "inst/2/10"}, nil,
			map[string]string{"udp/3/1": "little-endian"}},
		{"sequence not echoed", with(faults{noSeqEcho: true}), []string{"udp/12/1", "inst/2/9"}, nil, nil},
		{"replies to malformed packets", with(faults{replyMalformed: true}), []string{"udp/13"}, nil,
			map[string]string{"udp/13/1": "LOBBY_JOIN_FAILED"}},
		{"wrong room count", with(faults{wrongRoomCount: true}), []string{"udp/5/1"}, listReaders,
			map[string]string{"udp/5/1": "roomCount"}},
		{"seed 001 room list layout", with(faults{seed001List: true}), []string{"udp/5/1"}, listReaders,
			map[string]string{"udp/5/1": "seed 001"}},
		{"list leaves out the newest room", with(faults{listOmitsNewest: true}), []string{"udp/5/3"}, listReaders,
			map[string]string{"udp/5/3": "not among them"}},
		{"join into a full room allowed", with(faults{joinFullAllowed: true}), []string{"udp/10/3"}, nil, nil},
		{"crash on a truncated packet", with(faults{crashOnTruncated: true}), []string{"udp/13/1"}, []string{"udp/13"},
			map[string]string{"udp/13/1": "crashed or hangs"}},
		{"duplicate create makes two rooms", with(faults{dupCreateTwoRooms: true}), []string{"udp/6/2"}, nil,
			map[string]string{"udp/6/2": "second room"}},
		{"no rate limit", faults{}, []string{"udp/14/1"}, nil,
			map[string]string{"udp/14/1": "no rate limit observed"}},
	}
	// Every faulty server and its suite run at once (go test's -parallel
	// defaults to the 2 cores here, and the suites mostly wait); the
	// subtests then judge the reports.
	reps := make([]*Report, len(tests))
	errs := make([]error, len(tests))
	var wg sync.WaitGroup
	for i, tt := range tests {
		l := startTestLobby(t, tt.f, 12)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			reps[i], errs[i] = Run(ctx, suiteConfig(l.addr().String(), l.portRange()))
		}()
	}
	wg.Wait()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := reps[i], errs[i]
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != len(baseline.Results) {
				t.Fatalf("%d results, baseline %d", len(rep.Results), len(baseline.Results))
			}
			for _, x := range rep.Results {
				id := x.Case.ID
				switch {
				case matchAny(tt.caught, id):
					want := FailVerdict
					if x.Case.Level == Should {
						want = Warn
					}
					if x.Verdict != want {
						t.Errorf("%s is %v, want %v (the case meant for this defect)", id, x.Verdict, want)
					}
					if s, ok := tt.actual[id]; ok && !strings.Contains(x.Actual, s) {
						t.Errorf("%s actual %q lacks %q", id, x.Actual, s)
					}
				case matchAny(tt.mayskip, id) && x.Verdict == Skip:
				case x.Verdict != baseVerdict[id]:
					t.Errorf("%s is %v (%s: %s), baseline %v: an unrelated case changed", id, x.Verdict, x.Expected, x.Actual, baseVerdict[id])
				}
			}
			if t.Failed() {
				t.Log("\n" + reportText(rep))
			}
		})
	}
}
