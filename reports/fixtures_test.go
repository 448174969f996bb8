package reports

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

var fixedStart = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// histOf returns a latency histogram fed values.
func histOf(t testing.TB, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := result.NewLatencyHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func latencyOf(t testing.TB, values ...int64) result.Latency {
	t.Helper()
	l, err := result.NewLatency(histOf(t, values...))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// ramp returns n values from lo stepping by step.
func ramp(lo, step int64, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = lo + int64(i)*step
	}
	return v
}

func pointOf(t testing.TB, sec, req, errs int64, values ...int64) result.Point {
	t.Helper()
	h := result.NewSecondHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	p, err := result.NewPoint(sec, req, errs, h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleRun is a small but complete run: every section filled.
func sampleRun(t testing.TB) *result.Run {
	r := result.NewRun()
	r.Scenario = "scenarios/smoke.yaml"
	r.Target = "127.0.0.1:7777"
	r.StartedAt = fixedStart
	r.DurationNS = 2 * time.Second
	r.Steps = []result.Series{
		{Name: "list_rooms", Requests: 100, Successes: 100, FailuresByReason: map[string]int64{},
			Latency: latencyOf(t, ramp(200, 10, 100)...), Uncorrected: latencyOf(t, ramp(150, 10, 100)...),
			SendLag: latencyOf(t, ramp(5, 1, 100)...)},
		{Name: "join", Requests: 50, Successes: 45, Failures: 5, Retries: 3, Dropped: 2,
			FailuresByReason: map[string]int64{result.ReasonTimeout: 3, result.ReasonJoinDeny: 2},
			Latency:          latencyOf(t, ramp(1000, 1000, 45)...), Uncorrected: latencyOf(t, ramp(900, 900, 45)...),
			SendLag: latencyOf(t, ramp(20, 20, 45)...)},
	}
	r.Messages = []result.Series{
		{Name: "JoinReply", Requests: 45, Successes: 45, FailuresByReason: map[string]int64{},
			Latency: latencyOf(t, ramp(800, 900, 45)...), Uncorrected: latencyOf(t, ramp(800, 900, 45)...)},
	}
	r.Totals = result.Totals{Requests: 150, Successes: 145, Failures: 5, Retries: 3, Dropped: 2, Violations: 4,
		SessionsStarted: 50, SessionsFinished: 48, FailuresByReason: map[string]int64{result.ReasonTimeout: 3, result.ReasonJoinDeny: 2}}
	r.Violations = []result.Violation{{Rule: "U-CRC", Count: 4, Samples: []result.ViolationSample{
		{OffsetNS: 1500 * time.Millisecond, Packet: "deadbeef00", Request: "0102", Detail: "crc 0x00 != 0x5a"},
		{OffsetNS: 1600 * time.Millisecond, Packet: "deadbeef01"},
	}}}
	r.TimeSeries = []result.Point{
		pointOf(t, 0, 80, 2, ramp(200, 50, 78)...),
		pointOf(t, 1, 70, 3, ramp(300, 500, 67)...),
	}
	r.RateLimits = []result.RateLimitFinding{{Source: "127.0.0.2", ObservedLimitPerSec: 50, Sent: 500, Accepted: 250, Limited: 250,
		OtherSourcesP99BeforeUS: 1200, OtherSourcesP99AfterUS: 1300, Note: "limit per source address"}}
	r.Malformed = []result.MalformedFinding{{Kind: "bad_crc", Sent: 20, UnexpectedReplies: 1, LivenessChecks: 20, LivenessKept: 20}}
	r.Thresholds = []result.ThresholdResult{
		{Name: "join.p99 < 50ms", Metric: "join.p99", Op: "<", Limit: 0.05, Observed: float64(r.Steps[1].Latency.P99US) / 1e6, Pass: true},
		{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01, Observed: r.Totals.ErrorRate(), Pass: false},
	}
	return r
}

func sampleConform() *result.Conform {
	c := result.NewConform()
	c.Protocol = "udplobby"
	c.Target = "127.0.0.1:7777"
	c.StartedAt = fixedStart
	c.DurationNS = 1234 * time.Millisecond
	c.Notes = []string{"header spec, guessed from the first reply"}
	c.Cases = []result.Case{
		{ID: "udp-lobby/5/1", Section: "5", Description: "Server answers Hello", Requirement: "The server MUST answer a valid Hello with Welcome.",
			Level: result.LevelMust, Verdict: result.VerdictPass, Expected: "Welcome", Actual: "Welcome", DurationNS: 3 * time.Millisecond,
			Wire: []result.WireEntry{{Dir: result.DirSent, OffsetNS: 0, Hex: "0100"}, {Dir: result.DirRecv, OffsetNS: 2 * time.Millisecond, Hex: "0200ff"}}},
		{ID: "udp-lobby/5/2", Section: "5", Description: "Bad CRC is dropped | silently", Rule: "U-CRC", Requirement: "A packet with a bad CRC MUST be dropped\nwithout reply.",
			Level: result.LevelMust, Verdict: result.VerdictFail, Expected: "no reply within 500ms", Actual: "Error <code 3> & reply",
			Notes: []string{"the reply came from another port"}, DurationNS: 501 * time.Millisecond,
			Wire: []result.WireEntry{{Dir: result.DirSent, OffsetNS: 0, Local: "127.0.0.3:40112", Peer: "127.0.0.1:7777", Hex: "01ffff", Note: "crc flipped"},
				{Dir: result.DirRecv, OffsetNS: 1500 * time.Microsecond, Local: "127.0.0.3:40112", Peer: "127.0.0.1:7778", Hex: "0903"}},
			WireElided: 2},
		{ID: "udp-lobby/6/1", Section: "6", Description: "Ping is echoed", Requirement: "The server SHOULD echo Ping within 100 ms.",
			Level: result.LevelShould, Verdict: result.VerdictWarn, Expected: "echo within 100ms", Actual: "echo after 140ms", DurationNS: 140 * time.Millisecond},
		{ID: "udp-lobby/7/1", Section: "7", Description: "Version banner", Requirement: "Servers may announce a version.",
			Level: result.LevelInfo, Verdict: result.VerdictInfo, Actual: "lobbyd 1.2", Notes: []string{"banner in every Welcome"}},
		{ID: "udp-lobby/8/1", Section: "8", Description: "Reliable channel", Requirement: "The server MUST retransmit.",
			Level: result.LevelMust, Verdict: result.VerdictSkip, Actual: "not supported by target profile"},
	}
	return c
}

// suiteConform is a conform result as conformance.Run fills it: one case
// of each verdict, a failure with a wire log (a 12-byte request, a 40-byte
// reply, 3 entries over the log bounds), a warning with one entry.
func suiteConform() *result.Conform {
	c := result.NewConform()
	c.Protocol = "udp-lobby"
	c.Target = "127.0.0.1:8080"
	c.StartedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c.DurationNS = 1234 * time.Millisecond
	c.Notes = []string{"header spec, guessed from the first reply"}
	k := func(id, section, desc, level, verdict string) result.Case {
		return result.Case{ID: id, Section: section, Description: desc, Rule: "U-TEST", Requirement: "the quoted sentence of " + id, Level: level, Verdict: verdict}
	}
	wire := []result.WireEntry{
		{Dir: result.DirSent, OffsetNS: 120 * time.Microsecond, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: "01400007000000005fa3769e", Note: "LOBBY_LIST_ROOMS"},
		{Dir: result.DirRecv, OffsetNS: 450 * time.Microsecond, Local: "127.0.0.2:40000", Peer: "127.0.0.1:8080", Hex: strings.Repeat("ab", 40)},
	}
	pass := k("udp-lobby/3/1", "udp-lobby.md §3 Packet structure", "a passing case", result.LevelMust, result.VerdictPass)
	pass.Notes, pass.DurationNS = []string{"4 replies checked"}, time.Millisecond
	fail := k("udp-lobby/3/2", "udp-lobby.md §3 Packet structure", "a failing case", result.LevelMust, result.VerdictFail)
	fail.Expected, fail.Actual, fail.DurationNS, fail.Wire, fail.WireElided = "packetType 0x02", "packetType 0x01", 2*time.Millisecond, wire, 3
	warn := k("udp-lobby/6/2", "udp-lobby.md §6 LOBBY_CREATE_ROOM", "a warning", result.LevelShould, result.VerdictWarn)
	warn.Expected, warn.Actual, warn.DurationNS, warn.Wire = "one room", "two rooms", 3*time.Millisecond, wire[:1]
	info := k("udp-lobby/14/3", "udp-lobby.md §14 Security considerations", "an informational case", result.LevelInfo, result.VerdictInfo)
	info.Notes, info.DurationNS = []string{"accepted 100/s"}, 4*time.Millisecond
	skip := k("udp-lobby/7/2", "udp-lobby.md §7 LOBBY_ROOM_CREATED", "a skipped case", result.LevelMust, result.VerdictSkip)
	skip.Actual = "no --instance-ports given"
	c.Cases = []result.Case{pass, fail, warn, info, skip}
	return c
}
