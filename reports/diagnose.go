package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lobbybench/lobbybench/result"
)

// NeverSucceeded explains each step of run that was tried and never
// succeeded, one line per step, with the likely cause read from its
// failures: a request the server never answers (a step it does not
// implement, such as a TCP lobby that ignores CONNECT_REQ, which tcp-lobby.md
// calls an alternative to the join flow), a protocol violation the client
// could not read past in every session, a refusal, or a group whose
// creator failed. Steps that succeeded at least once are left out: their
// failures are in the table. WriteRunTable prints the lines under the
// step table.
func NeverSucceeded(run *result.Run) []string {
	var out []string
	for _, s := range run.StepsNeverSucceeded() {
		out = append(out, fmt.Sprintf("step %s never succeeded (%s): %s", s.Name, s.Tally(), likelyCause(run, s)))
	}
	return out
}

func likelyCause(run *result.Run, s result.Series) string {
	top, n := "", int64(0)
	for _, r := range sortedReasons(s.FailuresByReason) {
		if c := s.FailuresByReason[r]; c > n {
			top, n = r, c
		}
	}
	switch top {
	case "":
		return "every attempt was still waiting when the run ended; the run is shorter than the step's timeout and retries, or the server never answers (see the step's retries)"
	case result.ReasonTimeout:
		return "the server never answered it: a request it does not implement or ignores (e.g. a TCP lobby that ignores CONNECT_REQ, which tcp-lobby.md §5.2 calls an alternative to the join flow), or answers from somewhere the client does not listen"
	case result.ReasonViolation:
		return "every reply broke a protocol rule" + topRules(run) + ", one the client cannot read past, or any under on_violation: fail_step; see Protocol violations"
	case result.ReasonCreatorFailed:
		return "its group's create step never succeeded, so no member had a room to join; see that step"
	case result.ReasonConnRefused:
		return "the server refused the connection: nothing listens there"
	case result.ReasonJoinFailed, result.ReasonJoinDeny:
		return "the server refused it every time (" + top + ")"
	}
	return "every failure was " + top
}

// topRules names the three most counted violated rules, " (U-CRC ×12, …)".
func topRules(run *result.Run) string {
	vs := append([]result.Violation(nil), run.Violations...)
	if len(vs) == 0 {
		return ""
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Count > vs[j].Count })
	var parts []string
	for _, v := range vs[:min(3, len(vs))] {
		parts = append(parts, fmt.Sprintf("%s ×%d", v.Rule, v.Count))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
