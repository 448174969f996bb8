package result

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Drill is what a recovery drill found: the scenario's faults (kill -9 and
// restart, SIGTERM and restart, SIGSTOP for a while) applied to a server
// lobbybench owns (--target-cmd), one FaultResult each, in order, and the
// lobby's rooms checked after the run (udp-lobby). A drill is made by one
// process (the one that owns the target): Merge keeps the first shard's.
type Drill struct {
	Faults []FaultResult `json:"faults"`
	// Rooms is the check of the rooms the lobby lists at the end of the
	// run; nil when none was made (not a udp-lobby target, or the target
	// was down).
	Rooms *RoomCheck `json:"rooms,omitempty"`
}

// FaultResult is what one fault of a drill cost and how the target came
// back from it. Offsets count from the run's StartedAt.
type FaultResult struct {
	// Fault names it ("SIGKILL at +20s, then restart after 1s").
	Fault string `json:"fault"`
	// AtNS is when it was applied (the signal sent), or when it was due.
	AtNS time.Duration `json:"at_ns"`
	// NotApplied is true when the run ended (was interrupted) before the
	// fault was due: nothing else about it is a finding.
	NotApplied bool `json:"not_applied,omitempty"`
	// Error is why it could not be carried out in full (the signal could
	// not be sent, the restarted server never answered, the run ended
	// first).
	Error string `json:"error,omitempty"`
	// WentDown is true when the watchdog saw the target down because of
	// it (an outage tagged with Outage.Fault); a SIGSTOP shorter than the
	// watchdog can see leaves it false.
	WentDown bool `json:"went_down"`
	// Recovered is true when the target answered again before the end of
	// the run; RecoveredAfterNS is then the end of its (last) outage minus
	// AtNS, or 0 when it never went down.
	Recovered        bool          `json:"recovered"`
	RecoveredAfterNS time.Duration `json:"recovered_after_ns,omitempty"`
	// BaselineSuccess is the steps' success ratio before the fault (see
	// SuccessBack), BaselineSeconds how many seconds it covers (0: none
	// before the fault; 1 is then used).
	BaselineSuccess float64 `json:"baseline_success_ratio"`
	BaselineSeconds int     `json:"baseline_seconds"`
	// SuccessBack is true when the steps' success ratio was back to the
	// baseline before the end; SuccessBackAfterNS is then the end of the
	// first second in which it was, minus AtNS (SuccessBack).
	SuccessBack        bool          `json:"success_back"`
	SuccessBackAfterNS time.Duration `json:"success_back_after_ns,omitempty"`
	// SessionsLost counts the sessions that failed and were alive during
	// the fault: started (intended) before the target answered again
	// (the end of the run when it did not) and ended, failed, after AtNS.
	// Sessions cut by the end of the run do not count.
	SessionsLost int64 `json:"sessions_lost"`
	// Notes say what else is worth knowing ("not seen down by the
	// watchdog: the stop was shorter than it can see").
	Notes []string `json:"notes,omitempty"`
}

// RoomCheck is the check, after the run, of the rooms a lobby lists: each
// listed room's instance is asked the protocol's cheapest instance request
// (udp-lobby: CLIENT_HELLO); those that do not answer are listed but dead,
// rooms a fault leaked.
type RoomCheck struct {
	// AtNS is when the list was asked for.
	AtNS time.Duration `json:"at_ns"`
	// Listed is how many rooms the lobby listed, Probed how many of them
	// were asked (at most MaxRoomsProbed), Answered how many answered.
	Listed   int `json:"listed"`
	Probed   int `json:"probed"`
	Answered int `json:"answered"`
	// Dead are the listed rooms whose instance did not answer.
	Dead []DeadRoom `json:"dead,omitempty"`
	// Error is why the check could not be made (no reply to the list).
	Error string `json:"error,omitempty"`
}

// MaxRoomsProbed bounds the instances a RoomCheck asks.
const MaxRoomsProbed = 1000

// DeadRoom is a room the lobby lists whose instance does not answer.
type DeadRoom struct {
	ID      uint32 `json:"room_id"`
	Port    uint16 `json:"port"`
	State   string `json:"state"`
	Players int    `json:"players"`
	Detail  string `json:"detail"`
}

// The success-rate recovery of a fault (SuccessBack).
const (
	// BaselineWindow is how far back before a fault the baseline
	// success ratio is taken.
	BaselineWindow = 10 * time.Second
	// SuccessTolerance is how far below the baseline a second's success
	// ratio may be and still count as back (an absolute ratio: 0.05 = 5
	// percentage points).
	SuccessTolerance = 0.05
)

// SuccessBack is the one definition of "the success rate is back". The
// time series counts each second's step requests and failures by when they
// ended. The baseline is the success ratio (requests − errors) / requests
// summed over the whole seconds in the BaselineWindow before the fault's
// second (at), none before since (the previous fault's recovery of the
// success rate, so that one fault's failures do not lower the next one's
// baseline; 0 for the first); with none (a fault in the first second, or no request
// before it) it is 1. The success rate is back in the first second, from
// the one in which the target answered again (from, ≥ at) on, that has at
// least one request and a ratio at or above baseline − SuccessTolerance;
// after is the end of that second minus at. back is false when no second
// up to the end of the series qualifies.
func SuccessBack(ts []Point, at, from, since time.Duration) (baseline float64, baseSecs int, back bool, after time.Duration) {
	atSec := int64(at / time.Second)
	lo := max(atSec-int64(BaselineWindow/time.Second), int64((since+time.Second-1)/time.Second))
	var req, errs int64
	seen := map[int64]bool{}
	for _, p := range ts {
		if p.Second >= lo && p.Second < atSec && p.Requests > 0 {
			req += p.Requests
			errs += p.Errors
			seen[p.Second] = true
		}
	}
	baseline, baseSecs = 1, len(seen)
	if req > 0 {
		baseline = float64(req-errs) / float64(req)
	}
	fromSec := int64(max(from, at) / time.Second)
	best := int64(math.MaxInt64)
	for _, p := range ts {
		if p.Second < fromSec || p.Requests == 0 || p.Second >= best {
			continue
		}
		if ratio := float64(p.Requests-p.Errors) / float64(p.Requests); ratio >= baseline-SuccessTolerance {
			best = p.Second
		}
	}
	if best == math.MaxInt64 {
		return baseline, baseSecs, false, 0
	}
	return baseline, baseSecs, true, time.Duration(best+1)*time.Second - at
}

// AllRecovered reports whether every fault of the drill that was applied
// recovered.
func (d *Drill) AllRecovered() bool {
	for _, f := range d.Faults {
		if !f.Recovered && !f.NotApplied {
			return false
		}
	}
	return true
}

// Text is the drill in one phrase for the headline: "drill: 2 faults, all
// recovered (answering again after: 0.4 s / never seen down)", or which did not.
func (d *Drill) Text() string {
	n := len(d.Faults)
	var after, not []string
	skipped := 0
	for _, f := range d.Faults {
		switch {
		case f.NotApplied:
			skipped++
		case !f.Recovered:
			not = append(not, f.Fault)
		case f.WentDown:
			after = append(after, words.Duration(f.RecoveredAfterNS))
		default:
			after = append(after, "never seen down")
		}
	}
	text := "drill: " + words.Count(n, "fault") + ", "
	if len(not) == 0 {
		text += "all recovered"
		if len(after) > 0 {
			text += " (answering again after: " + strings.Join(after, " / ") + ")"
		}
	} else {
		text += fmt.Sprintf("%d not recovered by the end (%s)", len(not), strings.Join(not, "; "))
	}
	if skipped > 0 {
		text += fmt.Sprintf("; %d not applied (the run ended first)", skipped)
	}
	if r := d.Rooms; r != nil && len(r.Dead) > 0 {
		text += "; " + words.Count(len(r.Dead), "listed room") + " dead"
	}
	return text
}

// Lines says the drill one line per fault, then its room check: for the
// terminal and Markdown reports.
func (d *Drill) Lines() []string {
	var out []string
	for _, f := range d.Faults {
		out = append(out, f.Line())
	}
	if r := d.Rooms; r != nil {
		out = append(out, r.Line())
	}
	return out
}

// Line is one fault's result in words.
func (f FaultResult) Line() string {
	line := f.Fault + ": "
	switch {
	case f.NotApplied:
		return line + "not applied: the run ended first"
	case !f.Recovered:
		line += "NOT RECOVERED by the end"
	case f.WentDown:
		line += "answers again after " + words.Duration(f.RecoveredAfterNS)
	default:
		line += "never seen down"
	}
	if f.SuccessBack {
		line += fmt.Sprintf("; success rate back to %.0f%% after %s", 100*f.BaselineSuccess, words.Seconds(f.SuccessBackAfterNS))
	} else {
		line += fmt.Sprintf("; success rate not back to %.0f%% by the end", 100*f.BaselineSuccess)
	}
	line += "; " + words.Count(f.SessionsLost, "session") + " lost"
	if f.Error != "" {
		line += "; error: " + f.Error
	}
	for _, n := range f.Notes {
		line += "; " + n
	}
	return line
}

// Line is the room check in words.
func (r *RoomCheck) Line() string {
	if r.Error != "" {
		return fmt.Sprintf("rooms after the run (+%s): not checked: %s", words.Seconds(r.AtNS), r.Error)
	}
	line := fmt.Sprintf("rooms after the run (+%s): %d listed, %d probed, %d answered", words.Seconds(r.AtNS), r.Listed, r.Probed, r.Answered)
	if len(r.Dead) == 0 {
		return line + ", none leaked"
	}
	var ds []string
	for _, d := range r.Dead {
		ds = append(ds, fmt.Sprintf("room %d (port %d, %s, %d players)", d.ID, d.Port, d.State, d.Players))
	}
	return line + fmt.Sprintf("; %d listed but dead: %s", len(r.Dead), strings.Join(ds, ", "))
}
