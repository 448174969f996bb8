package result

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// SchemaVersion is the version of the JSON documents written by this package.
// It is bumped when a field changes meaning or is removed; adding a field does
// not bump it. Readers reject documents with a higher version.
const SchemaVersion = 1

// Document kinds, stored in the "kind" field of every top-level document.
const (
	KindRun     = "run"
	KindConform = "conform"
)

// Failure reasons used by the engine. Reasons are free strings; these are the
// names the engine and the threshold evaluator agree on.
const (
	ReasonTimeout     = "timeout"
	ReasonJoinFailed  = "join_failed"
	ReasonJoinDeny    = "join_deny"
	ReasonViolation   = "violation"
	ReasonConnRefused = "conn_refused"
	ReasonConnReset   = "conn_reset"
	// ReasonCreatorFailed: a group member's join whose group leader failed
	// before creating the room (simclient.ReasonCreatorFailed).
	ReasonCreatorFailed = "creator_failed"
)

// Run is the result of one `lobbybench run` (or the exact merge of several
// shards of one). All latencies are in microseconds.
type Run struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // always KindRun
	// Status and Verdict are the Headline, filled as the JSON is written
	// (Stamped), so the document says it first; a reader judges from the
	// rest, as every format does.
	Status  string `json:"status,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// TargetDown is the TARGET DOWN headline ("TARGET DOWN · at +1.2 s
	// (refused), not back by the end (…)") when the target went down
	// during the run (Run.DownOutages), so the document says it first;
	// empty otherwise. Producers fill it with NoteTargetDown; readers
	// judge from Outages.
	TargetDown string `json:"target_down,omitempty"`
	// NotStarted says why the command measured nothing at all, when it
	// ended before it began (result/notstarted.go); every format leads
	// with it. Nil for every document that measured.
	NotStarted *NotStarted `json:"not_started,omitempty"`
	Scenario   string      `json:"scenario,omitempty"`
	Target     string      `json:"target,omitempty"`
	StartedAt  time.Time   `json:"started_at"`
	// DurationNS is the wall time from start to the last recorded sample.
	DurationNS time.Duration `json:"duration_ns"`
	// Shards is how many recorded runs were merged into this one (1 if none).
	Shards int `json:"shards"`

	Totals Totals `json:"totals"`
	// Steps holds one entry per scenario step (list_rooms, join, ...), in the
	// order the engine registered them.
	Steps []Series `json:"steps"`
	// Messages holds one entry per protocol message type, measured request to
	// reply, plus tcp_dial (tcp-lobby: each successful TCP dial, from dial
	// start to connected).
	Messages   []Series           `json:"messages"`
	Violations []Violation        `json:"violations"`
	TimeSeries []Point            `json:"time_series"`
	RateLimits []RateLimitFinding `json:"rate_limits"`
	Malformed  []MalformedFinding `json:"malformed"`
	// Thresholds is filled by the threshold evaluator after Snapshot or
	// Merge; Merge drops the shards' results since they no longer hold.
	Thresholds []ThresholdResult `json:"thresholds"`

	// Sessions counts the simulated client sessions as the load engine's
	// scheduler saw them (the engine-only threshold metrics
	// sessions.completed, sessions.failed and clients.max read it). Nil
	// when the producer did not record it; Merge sums it when every shard
	// has it, and leaves it nil otherwise.
	Sessions *Sessions `json:"sessions,omitempty"`
	// ShardRuns describes each engine run this document holds: one for a
	// plain run, one per shard in merge order after Merge. Empty when the
	// producer did not record it.
	ShardRuns []ShardRun `json:"shard_runs,omitempty"`
	// Incomplete says why the document covers only part of the load: one
	// sentence per `run --workers` worker that died or left no result
	// (its shard is missing from the merge). Merge concatenates it; every
	// format leads with it (Run.Headline: INCOMPLETE).
	Incomplete []string `json:"incomplete,omitempty"`
	// MissingShards are the shards ("i/n") of a sharded run that `report
	// merge` was not given: the merge covers part of the run, and every
	// format leads with INCOMPLETE. Set by the merge of shards' documents
	// (from ShardRuns), not by Merge.
	MissingShards []string `json:"missing_shards,omitempty"`
	// Outages are the intervals during which the target did not answer
	// its watchdog (its own socket, a few probes a second, not counted as
	// load). Every format leads with the first one (Headline: TARGET
	// DOWN) unless it was a recovery drill's fault it came back from.
	Outages []Outage `json:"outages,omitempty"`
	// SilentAtEnd, when set, is a silence of the target that the run
	// ended in before its watchdog could find it down (SilentEnd).
	SilentAtEnd *SilentEnd `json:"silent_at_end,omitempty"`
	// TargetProcess is what the run cost the server, when lobbybench
	// owned it (--target-cmd) or embedded it.
	TargetProcess *TargetProcess `json:"target_process,omitempty"`
	// Drill is the recovery drill's findings, when the scenario scheduled
	// faults on an owned target (result/drill.go).
	Drill *Drill `json:"drill,omitempty"`

	// TimeToGame, RoomFill and Players are the lobby's own measures
	// (result/lobby.go): absent when the run recorded none.
	TimeToGame *Latency       `json:"time_to_game,omitempty"`
	RoomFill   *Latency       `json:"room_fill,omitempty"`
	Players    []PlayersPoint `json:"players,omitempty"`
}

// Sessions counts sessions as the engine's scheduler saw them. Unlike
// Totals.SessionsStarted/SessionsFinished (counted by the recorders) it
// tells how each session ended.
type Sessions struct {
	Started int64 `json:"started"`
	// Completed ran every step without error; Failed ended in an error
	// (or could not be set up); Cut were still running when the run ended
	// and were cut short.
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	// FailedStarts are the Failed sessions that could not open their
	// socket or connection (the generator ran out of descriptors or
	// ports): load the scenario asked for and the run did not generate.
	FailedStarts int64 `json:"failed_starts"`
	Cut          int64 `json:"cut"`
	// DroppedNoSlot and DroppedLate are starts the schedule wanted and the
	// engine did not make: no free client under max_clients, or the
	// generator too far behind.
	DroppedNoSlot int64 `json:"dropped_no_free_client"`
	DroppedLate   int64 `json:"dropped_late"`
	// DroppedLateStart are the arrivals a shard missed because it came up
	// after the run's start instant (`run --start-at`): due before it
	// joined, counted as dropped starts of their own cause (late_start),
	// never shifted. Load the scenario asked for and the run did not
	// generate: any makes the run INCOMPLETE (MissingLoad).
	DroppedLateStart int64 `json:"dropped_late_start,omitempty"`
	// MaxActive is the peak number of sessions live at once. After a merge
	// it is the sum of the shards' peaks: exact when the peaks coincide (a
	// closed model's plateau), otherwise an upper bound.
	MaxActive int64 `json:"max_active"`
	// ClientsAsked is, in the closed model, the most clients the stages
	// asked this run (a shard: its share) to keep live at once, as its
	// scheduler read them (every 100 ms, and not within 50 ms of the end: a
	// ramp counts what it had reached by the last read, so a ramp ending
	// with the run, or a short run, is not asked more than it had time
	// for); 0 in the open model and in
	// documents older than the field. ClientsPeak is the most clients that
	// were up at once: started and running their sessions, a client
	// pausing after a failed session or suspended in a wait included.
	// ClientsPeak far below ClientsAsked (ClientsShort) makes the run
	// INCOMPLETE. Merge sums both.
	ClientsAsked int64 `json:"clients_asked,omitempty"`
	ClientsPeak  int64 `json:"clients_peak,omitempty"`
}

// ClientsLiveFraction is the share of the clients the stages asked for
// (Sessions.ClientsAsked) below which the peak of live clients
// (Sessions.ClientsPeak) makes a closed-model run INCOMPLETE: the harness
// did not bring up the load the scenario asked for. 10 % leaves room for
// the clients a ramp's last read started just before the end; a harness
// that keeps up is within a few clients of the ask.
const ClientsLiveFraction = 0.9

// ClientsShort reports whether the peak of live clients stayed below
// ClientsLiveFraction of what the stages asked for.
func (s Sessions) ClientsShort() bool {
	return s.ClientsAsked > 0 && float64(s.ClientsPeak) < ClientsLiveFraction*float64(s.ClientsAsked)
}

// ClientsShortText says the shortfall: "only 5118 of the 1000000 clients
// the stages asked for were ever live at once".
func (s Sessions) ClientsShortText() string {
	return fmt.Sprintf("only %d of the %d clients the stages asked for %s ever live at once", s.ClientsPeak, s.ClientsAsked, words.Agree(s.ClientsPeak, "was", "were"))
}

// String says how the sessions ended in one line, as `run` prints it:
// "20 started, 18 completed, 2 failed (0 failed starts), 0 cut at the
// end, 0 dropped (0 no free client, 0 late), peak 12 live"; the arrivals
// missed by a late start, when there are any, are a third cause:
// "(0 no free client, 0 late, 40 late start)".
func (s Sessions) String() string {
	late := ""
	if s.DroppedLateStart > 0 {
		late = fmt.Sprintf(", %d late start", s.DroppedLateStart)
	}
	return fmt.Sprintf("%d started, %d completed, %d failed (%d failed starts), %d cut at the end, %d dropped (%d no free client, %d late%s), peak %d live",
		s.Started, s.Completed, s.Failed, s.FailedStarts, s.Cut, s.Dropped(), s.DroppedNoSlot, s.DroppedLate, late, s.MaxActive)
}

// Dropped is the number of dropped starts of every cause.
func (s Sessions) Dropped() int64 { return s.DroppedNoSlot + s.DroppedLate + s.DroppedLateStart }

// Add sums o into s (MaxActive too: see Sessions.MaxActive).
func (s *Sessions) Add(o Sessions) {
	s.Started += o.Started
	s.Completed += o.Completed
	s.Failed += o.Failed
	s.FailedStarts += o.FailedStarts
	s.Cut += o.Cut
	s.DroppedNoSlot += o.DroppedNoSlot
	s.DroppedLate += o.DroppedLate
	s.DroppedLateStart += o.DroppedLateStart
	s.MaxActive += o.MaxActive
	s.ClientsAsked += o.ClientsAsked
	s.ClientsPeak += o.ClientsPeak
}

// ShardRun is one engine run (a shard, or the whole run when unsharded):
// which share of the load it ran, how, and what the harness used.
type ShardRun struct {
	Shard    string `json:"shard"` // "i/n"; "0/1" when unsharded
	Protocol string `json:"protocol,omitempty"`
	Model    string `json:"model,omitempty"` // "open" or "closed"
	Seed     int64  `json:"seed"`
	// Embedded is true when the run started its own reference server (the
	// harness figures then include it).
	Embedded    bool     `json:"embedded"`
	Interrupted bool     `json:"interrupted"`
	Sources     int      `json:"source_addresses"`
	Sessions    Sessions `json:"sessions"`
	Harness     Harness  `json:"harness"`
	// StartAt is the run's start instant when it was given (`run
	// --start-at`, and every `run --workers` worker): the zero of this
	// shard's schedule, shared by every shard of a coordinated run.
	// StartWaitNS is how long the shard waited for it after it was ready;
	// LateStartNS how late it came to it, when more than the open
	// model's lateness bound (1 s): it joined late, and the arrivals due
	// before are in Sessions.DroppedLateStart.
	StartAt     time.Time     `json:"start_at,omitzero"`
	StartWaitNS time.Duration `json:"start_wait_ns,omitempty"`
	LateStartNS time.Duration `json:"late_start_ns,omitempty"`
	// PlayedPerSecond is, for an open-model shard with a start instant,
	// how many sessions it played in each second from StartAt, by the
	// moment it played them: the shards' sums, second by second, are the
	// offered load the target saw, to hold against the scenario's
	// schedule.
	PlayedPerSecond []int64 `json:"played_per_second,omitempty"`
}

// Harness is what the load generator process itself used during a run, so
// a reader can tell whether the harness could have been the bottleneck.
type Harness struct {
	// PeakRSSBytes is the process's peak resident set (Linux VmHWM; 0
	// elsewhere).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// PeakHeapBytes is the largest heap sampled (Go's
	// /memory/classes/heap/objects: bytes of allocated objects, live or
	// not yet swept). It can exceed PeakRSSBytes: a fresh allocation's
	// pages are not resident until written (large buffers, histogram
	// arrays). PeakGoRuntimeBytes is the largest total memory mapped by
	// the Go runtime.
	PeakHeapBytes      int64 `json:"peak_heap_bytes"`
	PeakGoRuntimeBytes int64 `json:"peak_go_runtime_bytes"`
	PeakGoroutines     int64 `json:"peak_goroutines"`
	GOMAXPROCS         int   `json:"gomaxprocs"`
	// CPUSeconds is the process's user+system CPU time over the run.
	CPUSeconds float64 `json:"cpu_seconds"`
	// StrayDatagrams counts datagrams the simulated clients received from
	// a port the target never used that did not decode as a reply to one
	// of their requests: other programs' traffic, not the target's, so
	// not a violation (simclient.Shared.StrayDatagram).
	StrayDatagrams int64 `json:"stray_datagrams,omitempty"`
	// LatencyEnd is where the run's latencies end (LatencyEndKernel,
	// LatencyEndUser, LatencyEndMixed); empty when no client said
	// (tcp-lobby's do not).
	LatencyEnd string `json:"latency_end,omitempty"`
	// Flows is how the clients met the network (scenario.FlowsMode):
	// "sockets", a socket each, or "virtual", a virtual flow each;
	// empty in results made before flows modes.
	Flows string `json:"flows,omitempty"`
	// FlowsDropped counts datagrams for a virtual flow whose client had
	// no room left for them (vflow.MaxQueued unread): lost in the
	// harness, as a full socket buffer loses them, not by the target.
	FlowsDropped int64 `json:"flows_dropped,omitempty"`
	// FlowsUnrouted counts datagrams for a virtual flow no client held
	// (a reply that came after its client closed, or traffic of no run),
	// and ICMP errors no one flow could be charged with (vflow's
	// reportError).
	FlowsUnrouted int64 `json:"flows_unrouted,omitempty"`
}

// Where a latency ends: the kernel's receive stamp of the reply
// (SO_TIMESTAMPNS, Linux), the moment the client's goroutine saw the
// reply (later by its wake-up: ~10 µs at the median, ~140 µs at p99 on a
// busy machine), or some of each.
const (
	LatencyEndKernel = "kernel receive stamp"
	LatencyEndUser   = "user-space receive"
	LatencyEndMixed  = "mixed"
)

// LatencyEndOf says where the latencies of a run end from its clients'
// sockets: stamped (kernel receive stamps on), plain (off), and missed,
// the replies timed in user space on a stamped socket (no stamp came
// with them). "" when no socket was counted.
func LatencyEndOf(stamped, plain, missed int64) string {
	switch {
	case stamped == 0 && plain == 0:
		return ""
	case plain == 0 && missed == 0:
		return LatencyEndKernel
	case stamped == 0:
		return LatencyEndUser
	}
	return LatencyEndMixed
}

// MergeLatencyEnd is where the latencies of two merged runs end.
func MergeLatencyEnd(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return LatencyEndMixed
}

// Totals are run-wide counters; each equals the sum over Steps except
// Sessions*, which are counted per simulated client.
type Totals struct {
	Requests         int64            `json:"requests"` // successes + failures + cut
	Successes        int64            `json:"successes"`
	Failures         int64            `json:"failures"`
	FailuresByReason map[string]int64 `json:"failures_by_reason"`
	// FailuresWhileDown are the failures of FailuresByReason recorded
	// while the target was down (within an Outage, from its last answered
	// probe, to 100 ms), by reason; absent when it never was. The
	// failures while it was up are the difference.
	FailuresWhileDown map[string]int64 `json:"failures_while_down,omitempty"`
	// Cut counts requests the end of the run cut short (see Series.Cut).
	Cut              int64 `json:"cut,omitempty"`
	Retries          int64 `json:"retries"`
	Dropped          int64 `json:"dropped"`
	Violations       int64 `json:"violations"`
	SessionsStarted  int64 `json:"sessions_started"`
	SessionsFinished int64 `json:"sessions_finished"`
	// DataSent and DataReceived are the UDP/TCP payload bytes the
	// simulated clients sent and received (k6's data_sent and
	// data_received): at least the sum over Steps, which counts what
	// arrived while each step ran.
	DataSent     int64 `json:"data_sent,omitempty"`
	DataReceived int64 `json:"data_received,omitempty"`
}

// ErrorRate is Failures over completed requests (Requests - Cut: a cut
// request has no outcome), 0 when none completed.
func (t Totals) ErrorRate() float64 { return rate(t.Failures, t.Requests-t.Cut) }

// Timeouts are the failed requests that got no reply after every retry
// (ReasonTimeout): failures with no latency, so no percentile shows them.
func (t Totals) Timeouts() int64 { return t.FailuresByReason[ReasonTimeout] }

// FailedText says the failed requests, their rate, and the timeouts
// among them, which every headline figure names since no latency
// percentile holds them: "failed 27 (69.23%; 27 timeouts)".
func (t Totals) FailedText() string {
	text := fmt.Sprintf("failed %d (%s", t.Failures, words.Pct(t.ErrorRate()))
	if n := t.Timeouts(); n > 0 {
		text += "; " + words.Count(n, "timeout")
	}
	return text + ")"
}

// Series is the record of one step or one message type.
type Series struct {
	Name string `json:"name"`
	// Requests counts first sends (a step that sends nothing, such as
	// think or barrier: its runs; a ping or echo series: each ping):
	// Successes + Failures + Cut. Retries counts re-sends of those, apart,
	// so every datagram or frame a step sent is a request or a retry.
	Requests         int64            `json:"requests"`
	Successes        int64            `json:"successes"`
	Failures         int64            `json:"failures"`
	FailuresByReason map[string]int64 `json:"failures_by_reason"`
	// Cut counts requests sent but cut short by the end of the run (the
	// stop signal or the grace period): neither answered nor failed, and
	// left out of the error rate.
	Cut int64 `json:"cut,omitempty"`
	// CutSilent counts those of Cut that had waited a second or more, or
	// their whole timeout, without a reply (metrics.SilentAfter): what a
	// server dropping requests leaves in a run shorter than the timeout.
	// Message types only (a step's run does not know its request's wait).
	CutSilent int64 `json:"cut_silent,omitempty"`
	Retries   int64 `json:"retries"`
	// Dropped counts starts the schedule could not keep (generator saturated).
	Dropped int64 `json:"dropped"`
	// Latency is measured from the intended send time (coordinated-omission
	// corrected, as wrk2); Uncorrected from the actual send time. SendLag
	// is the harness's own lateness: actual first send minus intended send
	// time, of the same requests (the part of Latency the server had no
	// hand in). Empty in documents written before it existed.
	Latency     Latency `json:"latency"`
	Uncorrected Latency `json:"uncorrected"`
	SendLag     Latency `json:"send_lag"`
	// DataSent and DataReceived are the payload bytes sent and received
	// while the step ran (a step: not a message type, whose are 0).
	DataSent     int64 `json:"data_sent,omitempty"`
	DataReceived int64 `json:"data_received,omitempty"`
	// Wait: the step sends nothing (think, barrier), so an attempt cut
	// by the end of the run is a wait the run ended during, not an
	// unanswered request (see Run.StepsNeverSucceeded). False for
	// messages and in documents older than the field.
	Wait bool `json:"wait,omitempty"`
}

// ErrorRate is Failures over completed requests (Requests - Cut =
// Successes + Failures), 0 when none completed.
func (s Series) ErrorRate() float64 { return rate(s.Failures, s.Requests-s.Cut) }

// Tally says the series' failures by reason, in reason order, and its
// requests cut by the end of the run: "2 join_deny, 3 timeout, 1 cut by
// the end of the run".
func (s Series) Tally() string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(s.FailuresByReason)) {
		parts = append(parts, fmt.Sprintf("%d %s", s.FailuresByReason[r], r))
	}
	if s.Cut > 0 {
		parts = append(parts, fmt.Sprintf("%d cut by the end of the run", s.Cut))
	}
	return strings.Join(parts, ", ")
}

func rate(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Latency is a latency distribution in microseconds: precomputed figures for
// readers plus the full histogram for merging.
type Latency struct {
	Count  int64   `json:"count"`
	MinUS  int64   `json:"min_us"`
	MeanUS float64 `json:"mean_us"`
	P50US  int64   `json:"p50_us"`
	P90US  int64   `json:"p90_us"`
	P99US  int64   `json:"p99_us"`
	P999US int64   `json:"p999_us"`
	MaxUS  int64   `json:"max_us"`
	// Hist is the HdrHistogram V2 compressed encoding, base64
	// (hdrhistogram.Histogram.Encode); empty when Count is 0.
	Hist string `json:"hist,omitempty"`
}

// Violation counts breaches of one protocol rule.
type Violation struct {
	Rule  string `json:"rule"` // e.g. "U-CRC"
	Count int64  `json:"count"`
	// Samples are the first MaxViolationSamples occurrences.
	Samples []ViolationSample `json:"samples"`
}

// MaxViolationSamples bounds Violation.Samples.
const MaxViolationSamples = 3

// ViolationSample is one offending packet and the request that caused it,
// both hex-encoded; Request is empty when unsolicited.
type ViolationSample struct {
	OffsetNS time.Duration `json:"offset_ns"` // since run start
	Packet   string        `json:"packet"`
	Request  string        `json:"request,omitempty"`
	Detail   string        `json:"detail,omitempty"`
}

// Point is one second of the run's time series. Requests and Errors count
// completions (by completion time) in [Second, Second+1) since start.
type Point struct {
	Second   int64 `json:"second"`
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	P50US    int64 `json:"p50_us"`
	P99US    int64 `json:"p99_us"`
	// Hist is this second's corrected latencies at 2 significant digits
	// (see NewSecondHistogram), kept so shards merge exactly.
	Hist string `json:"hist,omitempty"`
}

// RateLimitFinding is what the engine learned about the server's rate limit
// for one source (address or client group).
type RateLimitFinding struct {
	Source string `json:"source"`
	// ObservedLimitPerSec is the highest sustained accepted rate before the
	// server began refusing or dropping; 0 if no limit was hit.
	ObservedLimitPerSec float64 `json:"observed_limit_per_sec"`
	Sent                int64   `json:"sent"`
	Accepted            int64   `json:"accepted"`
	Limited             int64   `json:"limited"`
	// OtherSourcesP99Before/After are other sources' p99 latency before and
	// while this source was limited: the collateral effect.
	OtherSourcesP99BeforeUS int64  `json:"other_sources_p99_before_us"`
	OtherSourcesP99AfterUS  int64  `json:"other_sources_p99_after_us"`
	OtherSourcesErrors      int64  `json:"other_sources_errors"`
	Note                    string `json:"note,omitempty"`
}

// MalformedFinding sums the malformed packets of one kind the engine sent.
type MalformedFinding struct {
	Kind string `json:"kind"` // e.g. "bad_crc", "truncated"
	Sent int64  `json:"sent"`
	// UnexpectedReplies counts replies received where silence was expected.
	UnexpectedReplies int64 `json:"unexpected_replies"`
	// LivenessChecks counts probes after the malformed packet;
	// LivenessKept how many found the server still answering.
	LivenessChecks int64 `json:"liveness_checks"`
	LivenessKept   int64 `json:"liveness_kept"`
}

// LivenessText is "kept/checked", or "not checked" when no probe followed
// the malformed packets (a script's malformed sends have none of their
// own): never a "0/0" that reads as kept.
func (m MalformedFinding) LivenessText() string {
	if m.LivenessChecks == 0 {
		return "not checked"
	}
	return fmt.Sprintf("%d/%d", m.LivenessKept, m.LivenessChecks)
}

// ThresholdResult is one evaluated threshold (for example "join p99 < 50ms").
type ThresholdResult struct {
	Name     string  `json:"name"`           // as written in the scenario
	Metric   string  `json:"metric"`         // whole, as in the scenario: "join.p99", "errors.rate"
	Step     string  `json:"step,omitempty"` // only in files of older versions, which split the metric
	Op       string  `json:"op"`             // "<", "<=", ">", ">=", "==", "!="
	Limit    float64 `json:"limit"`
	Observed float64 `json:"observed"`
	Pass     bool    `json:"pass"`
	// NoData: the run produced no value for the metric (a latency without
	// a success, a rate without requests). Observed is then 0 and
	// meaningless, and Pass is false.
	NoData bool `json:"no_data,omitempty"`
	// Default: one of the run's default gates (DefaultErrorGate, DefaultSilentGate), which no
	// threshold of the scenario replaced; its Name ends "(default)".
	Default bool `json:"default,omitempty"`
}

// ObservedText is the observed value as every format shows it: "no data"
// when the run produced none, else the value in the metric's unit.
func (t ThresholdResult) ObservedText() string {
	if t.NoData {
		return "no data"
	}
	return t.ValueText(t.Observed)
}

// LimitText is the threshold's condition as every format shows it:
// "< 50.00ms", "< 1.00%".
func (t ThresholdResult) LimitText() string {
	return t.Op + " " + t.ValueText(t.Limit)
}

// runRatios are the run-wide ratio metrics, shown as percentages.
var runRatios = map[string]bool{"errors.rate": true, "cut_silent.rate": true}

// ValueText says v, the threshold's limit or observed value, by its
// metric: latency statistics (p50…p999, min, max, mean; canonical seconds,
// or microseconds for a "_us" metric) as durations, ratios as percentages,
// byte counts in bytes, everything else as a number.
func (t ThresholdResult) ValueText(v float64) string {
	m := t.Metric
	if i := strings.LastIndexByte(m, '.'); i >= 0 && !runRatios[m] {
		m = m[i+1:]
	}
	switch {
	case runRatios[m] || m == "error_rate":
		return words.Pct(v)
	case strings.HasSuffix(m, "_us"):
		return words.US(int64(v))
	case m == "p50" || m == "p90" || m == "p99" || m == "p999" || m == "min" || m == "max" || m == "mean":
		return words.US(int64(math.Round(v * 1e6)))
	case m == "throughput" || m == "limit":
		return words.Float(v) + "/s"
	case m == MeasureDataSent || m == MeasureDataReceived:
		return words.Bytes(int64(v))
	}
	return words.Float(v)
}

// Conform is the result of one `lobbybench conform`: conformance.Run fills
// it case by case, and every format renders it.
type Conform struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"` // always KindConform
	// Status and Verdict are the Headline, filled as the JSON is written
	// (Stamped), so the document says it first; a reader judges from the
	// rest, as every format does.
	Status  string `json:"status,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	// NotStarted says why the command measured nothing at all, when it
	// ended before it began (result/notstarted.go); every format leads
	// with it. Nil for every document that measured.
	NotStarted *NotStarted `json:"not_started,omitempty"`
	Protocol   string      `json:"protocol,omitempty"`
	Target     string      `json:"target,omitempty"`
	Strict     bool        `json:"strict"`
	// MaxSkips is the skip budget the run was given (conform --max-skips):
	// more skipped cases fail it. Nil when none was set.
	MaxSkips *int `json:"max_skips,omitempty"`
	// Interrupted: the suite was stopped (Ctrl-C, its context cancelled)
	// before every selected case ran to its end; the cases it cut are
	// skips saying "run interrupted". Every format leads with it
	// (Conform.Headline).
	Interrupted bool `json:"interrupted,omitempty"`
	// Outages are the times the target stopped answering its protocol's
	// reachability check, checked after every case (after the whole
	// batch of concurrent cases), with the cases in flight (During).
	// Every format leads with the first (Headline: TARGET DOWN).
	// The JSON holds them before the cases, as every format leads with
	// them.
	Outages    []Outage      `json:"outages,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	DurationNS time.Duration `json:"duration_ns"`
	// Notes describe the run as a whole (e.g. "header spec, guessed from
	// the first reply").
	Notes []string `json:"notes,omitempty"`
	Cases []Case   `json:"cases"`
	// TargetProcess is the server lobbybench owned (--target-cmd).
	TargetProcess *TargetProcess `json:"target_process,omitempty"`
}

// Levels of a requirement.
const (
	LevelMust   = "must"
	LevelShould = "should"
	LevelInfo   = "info"
)

// Verdicts of a case.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	VerdictWarn = "warn"
	VerdictInfo = "info"
	VerdictSkip = "skip"
	// VerdictNotRun: the case was not run because the target was down
	// when its turn came. Counted apart from skips, never a pass.
	VerdictNotRun = "not_run"
)

// Case is one conformance check.
type Case struct {
	ID          string `json:"id"` // e.g. "udp-lobby/5/2"
	Section     string `json:"section"`
	Description string `json:"description"`
	// Rule is the protocol rule id the case checks (e.g. "U-CRC"), when
	// there is one.
	Rule        string `json:"rule,omitempty"`
	Requirement string `json:"requirement"` // quoted spec text
	Level       string `json:"level"`
	Verdict     string `json:"verdict"`
	Expected    string `json:"expected,omitempty"`
	// Actual is what was observed; for a skip, why it was skipped.
	Actual string `json:"actual,omitempty"`
	// Notes are the case's further observations, one per line.
	Notes      []string      `json:"notes,omitempty"`
	DurationNS time.Duration `json:"duration_ns"`
	Wire       []WireEntry   `json:"wire,omitempty"`
	// WireElided counts exchange entries left out of Wire by the suite's
	// log bounds (MaxCaseWireEntries, MaxCaseWireBytes: a flood keeps its
	// first entries).
	WireElided int `json:"wire_elided,omitempty"`
	// WireOmitted counts recorded entries a rendering left out
	// (Conform.WithoutPassingWire); never set in the JSON.
	WireOmitted int `json:"-"`
}

// Bounds of one case's wire log (Case.Wire): the suite keeps a case's
// first entries up to these and counts the rest in Case.WireElided.
const (
	MaxCaseWireEntries = 256
	MaxCaseWireBytes   = 256 << 10
)

// Wire directions.
const (
	DirSent = "sent"
	DirRecv = "recv"
)

// WireEntry is one datagram or frame of a case's exchange.
type WireEntry struct {
	Dir      string        `json:"dir"`
	OffsetNS time.Duration `json:"offset_ns"` // since the case started
	// Local is the suite's socket address, Peer the target's (e.g.
	// "127.0.0.3:40112", "127.0.0.1:7777"); the datagram went from Local
	// to Peer when Dir is DirSent. Empty when unknown.
	Local string `json:"local,omitempty"`
	Peer  string `json:"peer,omitempty"`
	Hex   string `json:"hex"`
	// Note says what the entry is, when the case says (e.g. "truncated at 5").
	Note string `json:"note,omitempty"`
}

// Summary counts cases by verdict.
type Summary struct {
	Total, Pass, Fail, Warn, Info, Skip, NotRun int
}

// Summary counts c's cases by verdict.
func (c *Conform) Summary() Summary {
	var s Summary
	for _, k := range c.Cases {
		s.Total++
		switch k.Verdict {
		case VerdictPass:
			s.Pass++
		case VerdictFail:
			s.Fail++
		case VerdictWarn:
			s.Warn++
		case VerdictInfo:
			s.Info++
		case VerdictSkip:
			s.Skip++
		case VerdictNotRun:
			s.NotRun++
		}
	}
	return s
}

// CountLine is the conform result's counts in one line: "41 cases in
// 4.2s: 35 passed, 1 failed, 2 warnings, 1 info, 2 skipped".
func (c *Conform) CountLine() string {
	s := c.Summary()
	line := fmt.Sprintf("%s in %v: %d passed, %d failed, %s, %d info, %d skipped",
		words.Count(s.Total, "case"), c.DurationNS.Round(time.Millisecond), s.Pass, s.Fail, words.Count(s.Warn, "warning"), s.Info, s.Skip)
	if s.NotRun > 0 {
		line += fmt.Sprintf(", %d not run (target down)", s.NotRun)
	}
	if c.Strict && s.Warn > 0 {
		line += " (strict: warnings fail the run)"
	}
	return line
}

// NewRun returns an empty Run with the header fields set.
func NewRun() *Run {
	return &Run{SchemaVersion: SchemaVersion, Kind: KindRun, Shards: 1,
		Totals: Totals{FailuresByReason: map[string]int64{}}}
}

// NewConform returns an empty Conform with the header fields set.
func NewConform() *Conform {
	return &Conform{SchemaVersion: SchemaVersion, Kind: KindConform}
}

// Doc is one result document: a *Run or a *Conform, nothing else (the
// unexported method seals it), or a type embedding one, which is that
// document with extra fields its JSON carries (engine.Result: a run with
// the engine's figures under "engine"). Read returns one; every Format
// writes one.
type Doc interface {
	Headline() Headline
	// document is the *Run or *Conform itself.
	document() Doc
}

func (r *Run) document() Doc     { return r }
func (c *Conform) document() Doc { return c }

// A *Capacity (result/capacity.go) is a Doc too.

// Document is the *Run, *Conform or *Capacity d is, or embeds.
func Document(d Doc) Doc { return d.document() }

// Stamper is a Doc that embeds a *Run, *Conform or *Capacity with fields
// of its own (engine.Result): Stamped returns a copy of it whose document
// is Stamped.
type Stamper interface {
	Doc
	Stamped() Doc
}

// Stamped returns d with its headline filled in (Status and Verdict), on a
// copy: what a JSON document of d leads with. A Doc embedding one of the
// three stamps itself (Stamper); any other is returned as it is.
func Stamped(d Doc) Doc {
	switch v := d.(type) {
	case *Run:
		if v != nil {
			cp := *v
			cp.Status, cp.Verdict = headlineOf(v)
			return &cp
		}
	case *Conform:
		if v != nil {
			cp := *v
			cp.Status, cp.Verdict = headlineOf(v)
			return &cp
		}
	case *Capacity:
		if v != nil {
			cp := *v
			cp.Status, cp.Verdict = headlineOf(v)
			return &cp
		}
	case Stamper:
		return v.Stamped()
	}
	return d
}

// headlineOf is d's headline as a document's status and verdict.
func headlineOf(d Doc) (status, verdict string) {
	hl := d.Headline()
	return hl.Status, hl.Text
}

type header struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"`
}

// Read decodes a run, conform or capacity document and returns a *Run,
// *Conform or *Capacity. It
// rejects unknown kinds and versions newer than SchemaVersion.
func Read(r io.Reader) (Doc, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var h header
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("reports: not a lobbybench result: %w", err)
	}
	if h.SchemaVersion < 1 || h.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("reports: schema_version %d not supported (this build reads 1..%d)", h.SchemaVersion, SchemaVersion)
	}
	switch h.Kind {
	case KindRun:
		var v Run
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("reports: run document: %w", err)
		}
		return &v, nil
	case KindConform:
		var v Conform
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("reports: conform document: %w", err)
		}
		return &v, nil
	case KindCapacity:
		var v Capacity
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("reports: capacity document: %w", err)
		}
		return &v, nil
	}
	return nil, fmt.Errorf("reports: unknown kind %q (want %q, %q or %q)", h.Kind, KindRun, KindConform, KindCapacity)
}

// KindOf is d's kind: KindRun, KindConform or KindCapacity.
func KindOf(d Doc) string {
	switch d.document().(type) {
	case *Conform:
		return KindConform
	case *Capacity:
		return KindCapacity
	}
	return KindRun
}

// ReadRun is Read that requires a run document.
func ReadRun(r io.Reader) (*Run, error) {
	v, err := Read(r)
	if err != nil {
		return nil, err
	}
	run, ok := v.(*Run)
	if !ok {
		return nil, fmt.Errorf("reports: got a %s document, want %s", KindOf(v), KindRun)
	}
	return run, nil
}

// ReadConform is Read that requires a conform document.
func ReadConform(r io.Reader) (*Conform, error) {
	v, err := Read(r)
	if err != nil {
		return nil, err
	}
	c, ok := v.(*Conform)
	if !ok {
		return nil, fmt.Errorf("reports: got a %s document, want %s", KindOf(v), KindConform)
	}
	return c, nil
}

// Step returns the step called name, for threshold evaluators.
func (r *Run) Step(name string) (Series, bool) { return findSeries(r.Steps, name) }

// Message returns the message-type series called name.
func (r *Run) Message(name string) (Series, bool) { return findSeries(r.Messages, name) }

func findSeries(ss []Series, name string) (Series, bool) {
	for _, s := range ss {
		if s.Name == name {
			return s, true
		}
	}
	return Series{}, false
}
