package result

import (
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// StatusTargetDown is the headline status of a run or suite during which
// the target stopped answering: the most important finding, said before
// any other (a FAIL, an interruption, missing load). `run` and `conform`
// exit 7 on it.
const StatusTargetDown = "target_down"

// How a target was found down (Outage.Kind).
const (
	// DownRefused: nothing listens any more (TCP connection refused, or an
	// ICMP port unreachable for a datagram): the process is most likely
	// gone.
	DownRefused = "refused"
	// DownSilent: the target still accepts connections or receives
	// datagrams and answers nothing: it is hung.
	DownSilent = "silent"
	// DownExited: lobbybench owns the target (--target-cmd) and saw its
	// process end.
	DownExited = "exited"
	// DownClosed: the target accepts TCP connections and closes or
	// resets them unanswered.
	DownClosed = "closed"
	// DownGarbled: the target answers, but with datagrams that do not
	// decode as its protocol.
	DownGarbled = "garbled"
)

// Outage is one interval during which the target did not answer its
// protocol's reachability check, as a watchdog (run) or the check after
// each case (conform) saw it. Offsets count from the document's
// StartedAt.
type Outage struct {
	// StartNS is when the target was first seen down: the first failed
	// probe, or an owned process's exit.
	StartNS time.Duration `json:"start_ns"`
	// LastUpNS is the last time before StartNS it was seen answering (the
	// outage began somewhere between the two).
	LastUpNS time.Duration `json:"last_up_ns"`
	// EndNS is when it answered again; 0 with Back false when it was not
	// back by the end.
	EndNS time.Duration `json:"end_ns,omitempty"`
	Back  bool          `json:"back"`
	// Kind is DownRefused, DownSilent, DownClosed, DownGarbled or
	// DownExited.
	Kind string `json:"kind"`
	// Detail is what the probe saw, in words ("read udp …: connection
	// refused", "no reply to LOBBY_LIST_ROOMS in 1s").
	Detail string `json:"detail,omitempty"`
	// During names what was in flight when it went down: the conformance
	// cases, or the run's steps.
	During []string `json:"during,omitempty"`
	// Exit is the owned process's end ("killed by SIGABRT", "exited with
	// status 2"), when lobbybench owns the target.
	Exit string `json:"exit,omitempty"`
	// Output is the owned process's last lines of stdout and stderr as
	// it went down.
	Output []string `json:"output,omitempty"`
	// ReRunAlone, in conform with an owned target (--target-cmd), are the
	// cases in flight that were re-run one at a time on a fresh server to
	// find which kills it; Culprits are those that killed it alone (none:
	// only together). See CulpritText.
	ReRunAlone []string `json:"rerun_alone,omitempty"`
	Culprits   []string `json:"culprits,omitempty"`
	// Fault names the recovery-drill fault that caused it ("kill -9 at
	// +20s"), when the scenario scheduled one: such an outage is expected,
	// and judged by its recovery, not counted as TARGET DOWN unless the
	// target never came back.
	Fault string `json:"fault,omitempty"`
	// AnsweredBefore is how many requests of the load had been answered
	// (succeeded) when the outage was first seen, at StartNS (run only).
	AnsweredBefore int64 `json:"answered_before,omitempty"`
	// Failures are the load's failures from LastUpNS to EndNS (to the
	// end when not back), by reason, to 100 ms (run only): what the
	// outage cost, apart from what failed while the target was up.
	Failures map[string]int64 `json:"failures_by_reason,omitempty"`
	// FailuresAfter, for an outage the target came back from after its
	// process was gone (refused or exited: a restarted server), are the
	// load's failures of requests sent once it was back (from EndNS and
	// the longest a request sent before could still take, to the next
	// outage or the end), by reason (run only): what the restart's lost
	// state cost (sessions, rooms the new process never knew).
	FailuresAfter map[string]int64 `json:"failures_after_back,omitempty"`
}

// Duration is how long the outage lasted, up to end when it was not back.
func (o Outage) Duration(end time.Duration) time.Duration {
	if o.Back {
		return o.EndNS - o.StartNS
	}
	return end - o.StartNS
}

// ProcSample is one reading of an owned target's process from /proc,
// taken about once a second. CPU times are cumulative since the process
// started.
type ProcSample struct {
	OffsetNS  time.Duration `json:"offset_ns"`
	UserNS    time.Duration `json:"cpu_user_ns"`
	SystemNS  time.Duration `json:"cpu_system_ns"`
	RSSBytes  int64         `json:"rss_bytes"`
	Threads   int           `json:"threads"`
	OpenFDs   int           `json:"open_fds"`
	Restarted bool          `json:"restarted,omitempty"` // first sample of a new process
}

// TargetProcess describes the server lobbybench started and owned
// (--target-cmd), or the embedded reference server (Command "embedded"):
// what the load cost it.
type TargetProcess struct {
	Command string `json:"command"`
	// PIDs are the process ids it had, one per start.
	PIDs []int `json:"pids"`
	// Starts counts starts (1 + restarts).
	Starts int `json:"starts"`
	// Exits are how each of its processes ended ("killed by SIGABRT"),
	// in order; the last is the stop at the end when it stopped cleanly.
	Exits   []string     `json:"exits,omitempty"`
	Samples []ProcSample `json:"samples"`
	// PeakRSSBytes is the largest RSS sampled.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPUNS is the user+system CPU time it used over the run, summed over
	// its processes.
	CPUNS time.Duration `json:"cpu_ns"`
	// Stop says how lobbybench's stop at the end went ("stopped on
	// SIGTERM: exited with status 0", or killed with SIGKILL after the
	// grace period); empty when its process had already ended (see
	// Exits) or lobbybench did not start it.
	Stop string `json:"stop,omitempty"`
	// Note says what the figures include, when it is not the server
	// alone (the embedded server shares lobbybench's process).
	Note string `json:"note,omitempty"`
}

// What says in words how the target was found down: "refused: nothing
// listens", "silent: it answers nothing", "exited: killed by SIGABRT".
func (o Outage) What() string {
	switch o.Kind {
	case DownRefused:
		return "refused: nothing listens"
	case DownSilent:
		return "silent: it answers nothing"
	case DownClosed:
		return "closed: it accepts connections and closes or resets them unanswered"
	case DownGarbled:
		return "garbled: it answers with bytes that are not its protocol"
	case DownExited:
		if o.Exit != "" {
			return "exited: " + o.Exit
		}
		return "exited"
	}
	return o.Kind
}

// CulpritText says what re-running the cases in flight one at a time
// found: "tcp-lobby/5.2/1 kills it alone", or "it died while A, B, C ran
// together; none kills it alone"; "" when none was re-run.
func (o Outage) CulpritText() string {
	switch {
	case len(o.ReRunAlone) == 0:
		return ""
	case len(o.Culprits) == 1:
		return o.Culprits[0] + " kills it alone"
	case len(o.Culprits) > 1:
		return strings.Join(o.Culprits, ", ") + " each kill it alone"
	}
	return "it died while " + strings.Join(o.During, ", ") + " ran together; none kills it alone"
}

// Line says in one line what the owned target did and cost, as conform
// prints it: "target process: 2 starts, exits: killed by SIGABRT,
// exited with status 0; CPU 40ms, peak RSS 12.0 MiB (0 samples)" (the
// figures are Summary's); "" for nil.
func (tp *TargetProcess) Line() string {
	if tp == nil {
		return ""
	}
	s := "target process: " + words.Count(tp.Starts, "start")
	if len(tp.Exits) > 0 {
		s += ", exits: " + strings.Join(tp.Exits, ", ")
	}
	return s + "; " + tp.Summary()
}
