package result

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The fixtures of the model's tests; package reports' tests have the same
// ones for its goldens.

var fixedStart = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// histOf returns a latency histogram fed values.
func histOf(t testing.TB, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := NewLatencyHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func latencyOf(t testing.TB, values ...int64) Latency {
	t.Helper()
	l, err := NewLatency(histOf(t, values...))
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

func pointOf(t testing.TB, sec, req, errs int64, values ...int64) Point {
	t.Helper()
	h := NewSecondHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPoint(sec, req, errs, h)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleRun is a small but complete run: every section filled.
func sampleRun(t testing.TB) *Run {
	r := NewRun()
	r.Scenario = "scenarios/smoke.yaml"
	r.Target = "127.0.0.1:7777"
	r.StartedAt = fixedStart
	r.DurationNS = 2 * time.Second
	r.Steps = []Series{
		{Name: "list_rooms", Requests: 100, Successes: 100, FailuresByReason: map[string]int64{},
			Latency: latencyOf(t, ramp(200, 10, 100)...), Uncorrected: latencyOf(t, ramp(150, 10, 100)...),
			SendLag: latencyOf(t, ramp(5, 1, 100)...)},
		{Name: "join", Requests: 50, Successes: 45, Failures: 5, Retries: 3, Dropped: 2,
			FailuresByReason: map[string]int64{ReasonTimeout: 3, ReasonJoinDeny: 2},
			Latency:          latencyOf(t, ramp(1000, 1000, 45)...), Uncorrected: latencyOf(t, ramp(900, 900, 45)...),
			SendLag: latencyOf(t, ramp(20, 20, 45)...)},
	}
	r.Messages = []Series{
		{Name: "JoinReply", Requests: 45, Successes: 45, FailuresByReason: map[string]int64{},
			Latency: latencyOf(t, ramp(800, 900, 45)...), Uncorrected: latencyOf(t, ramp(800, 900, 45)...)},
	}
	r.Totals = Totals{Requests: 150, Successes: 145, Failures: 5, Retries: 3, Dropped: 2, Violations: 4,
		SessionsStarted: 50, SessionsFinished: 48, FailuresByReason: map[string]int64{ReasonTimeout: 3, ReasonJoinDeny: 2}}
	r.Violations = []Violation{{Rule: "U-CRC", Count: 4, Samples: []ViolationSample{
		{OffsetNS: 1500 * time.Millisecond, Packet: "deadbeef00", Request: "0102", Detail: "crc 0x00 != 0x5a"},
		{OffsetNS: 1600 * time.Millisecond, Packet: "deadbeef01"},
	}}}
	r.TimeSeries = []Point{
		pointOf(t, 0, 80, 2, ramp(200, 50, 78)...),
		pointOf(t, 1, 70, 3, ramp(300, 500, 67)...),
	}
	r.RateLimits = []RateLimitFinding{{Source: "127.0.0.2", ObservedLimitPerSec: 50, Sent: 500, Accepted: 250, Limited: 250,
		OtherSourcesP99BeforeUS: 1200, OtherSourcesP99AfterUS: 1300, Note: "limit per source address"}}
	r.Malformed = []MalformedFinding{{Kind: "bad_crc", Sent: 20, UnexpectedReplies: 1, LivenessChecks: 20, LivenessKept: 20}}
	r.Thresholds = []ThresholdResult{
		{Name: "join.p99 < 50ms", Metric: "join.p99", Op: "<", Limit: 0.05, Observed: float64(r.Steps[1].Latency.P99US) / 1e6, Pass: true},
		{Name: "errors.rate < 1%", Metric: "errors.rate", Op: "<", Limit: 0.01, Observed: r.Totals.ErrorRate(), Pass: false},
	}
	return r
}

func sampleConform() *Conform {
	c := NewConform()
	c.Protocol = "udplobby"
	c.Target = "127.0.0.1:7777"
	c.StartedAt = fixedStart
	c.DurationNS = 1234 * time.Millisecond
	c.Notes = []string{"header spec, guessed from the first reply"}
	c.Cases = []Case{
		{ID: "udp-lobby/5/1", Section: "5", Description: "Server answers Hello", Requirement: "The server MUST answer a valid Hello with Welcome.",
			Level: LevelMust, Verdict: VerdictPass, Expected: "Welcome", Actual: "Welcome", DurationNS: 3 * time.Millisecond,
			Wire: []WireEntry{{Dir: DirSent, OffsetNS: 0, Hex: "0100"}, {Dir: DirRecv, OffsetNS: 2 * time.Millisecond, Hex: "0200ff"}}},
		{ID: "udp-lobby/5/2", Section: "5", Description: "Bad CRC is dropped | silently", Rule: "U-CRC", Requirement: "A packet with a bad CRC MUST be dropped\nwithout reply.",
			Level: LevelMust, Verdict: VerdictFail, Expected: "no reply within 500ms", Actual: "Error <code 3> & reply",
			Notes: []string{"the reply came from another port"}, DurationNS: 501 * time.Millisecond,
			Wire: []WireEntry{{Dir: DirSent, OffsetNS: 0, Local: "127.0.0.3:40112", Peer: "127.0.0.1:7777", Hex: "01ffff", Note: "crc flipped"},
				{Dir: DirRecv, OffsetNS: 1500 * time.Microsecond, Local: "127.0.0.3:40112", Peer: "127.0.0.1:7778", Hex: "0903"}},
			WireElided: 2},
		{ID: "udp-lobby/6/1", Section: "6", Description: "Ping is echoed", Requirement: "The server SHOULD echo Ping within 100 ms.",
			Level: LevelShould, Verdict: VerdictWarn, Expected: "echo within 100ms", Actual: "echo after 140ms", DurationNS: 140 * time.Millisecond},
		{ID: "udp-lobby/7/1", Section: "7", Description: "Version banner", Requirement: "Servers may announce a version.",
			Level: LevelInfo, Verdict: VerdictInfo, Actual: "lobbyd 1.2", Notes: []string{"banner in every Welcome"}},
		{ID: "udp-lobby/8/1", Section: "8", Description: "Reliable channel", Requirement: "The server MUST retransmit.",
			Level: LevelMust, Verdict: VerdictSkip, Actual: "not supported by target profile"},
	}
	return c
}

// writeJSON writes v as the JSON format does (reports.WriteJSON).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
