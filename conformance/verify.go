package conformance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
)

// ErrUnreachable is wrapped by a Group's Reach when the target does not
// answer at all; the CLI exits 3 on it.
var ErrUnreachable = errors.New("target unreachable")

// Garbled is the error of a Group's Reach when the target answered what
// (its request, "LOBBY_LIST_ROOMS") only with b, bytes of no protocol: it
// says so ("target T answers, but not in its protocol: …"), not that the
// target is unreachable, while it matches ErrUnreachable (no suite can run:
// exit 3) and liveness.ErrGarbled (the target-life check's outage kind).
func Garbled(target, what string, b []byte) error {
	return &garbledError{msg: fmt.Sprintf("target %s answers, but not in its protocol: %s drew only %d bytes that do not decode as it: %s",
		target, what, len(b), HexShort(b))}
}

type garbledError struct{ msg string }

func (e *garbledError) Error() string { return e.msg }
func (e *garbledError) Is(target error) bool {
	return target == ErrUnreachable || target == liveness.ErrGarbled
}

// VerifyError is what a case returns when the target breaks the requirement
// (h2spec's verifiers): what the case expected and what it saw. It drives
// the terminal output, JSON and JUnit alike.
type VerifyError struct {
	Expected string
	Actual   string
	// Level, when non-zero, overrides the case's level for this outcome
	// (e.g. a MUST case whose finding is only a warning in one branch).
	Level Level
	// Owner is the id of the case that owns the reply this finding is
	// about (set by Owned); a setup that turns the finding into a skip
	// names it.
	Owner string
}

// Error returns "expected …, got …".
func (e *VerifyError) Error() string {
	return fmt.Sprintf("expected %s, got %s", e.Expected, e.Actual)
}

// Fail returns a *VerifyError.
func Fail(expected, actual string) error {
	return &VerifyError{Expected: expected, Actual: actual}
}

// Failf returns a *VerifyError whose Actual is formatted. An empty byte
// slice among the arguments prints as "(0 bytes)", never as nothing: "%
// x" of an empty payload once left an Actual reading "payload ".
func Failf(expected, format string, a ...any) error {
	return &VerifyError{Expected: expected, Actual: fmt.Sprintf(format, nonEmpty(a)...)}
}

// Warnf returns a *VerifyError that is a warning whatever the case's level.
func Warnf(expected, format string, a ...any) error {
	return &VerifyError{Expected: expected, Actual: fmt.Sprintf(format, nonEmpty(a)...), Level: Should}
}

// nonEmpty returns a with each empty []byte replaced by noBytes.
func nonEmpty(a []any) []any {
	var out []any
	for i, x := range a {
		if b, ok := x.([]byte); ok && len(b) == 0 {
			if out == nil {
				out = append([]any(nil), a...)
			}
			out[i] = noBytes{}
		}
	}
	if out == nil {
		return a
	}
	return out
}

// noBytes formats, under any verb, as "(0 bytes)".
type noBytes struct{}

func (noBytes) Format(f fmt.State, _ rune) { fmt.Fprint(f, "(0 bytes)") }

// SkipError is what a case returns when a precondition is not met.
type SkipError struct {
	Reason string
	// Owner is the id of the case that judges the broken reply this skip
	// rests on ("" when it rests on none); the runner appends
	// "— judged by <Owner>" to the reason (and ", not run" when that case
	// is not part of the run).
	Owner string
}

// Error returns the reason.
func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// Skipf returns a *SkipError.
func Skipf(format string, a ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, a...)}
}

// Inconclusivef returns the *SkipError of a case that could not produce
// the condition it tests (a flood that never reached its volume, the
// harness too late to read what the server sent): its reason begins
// "inconclusive: " and should say what was reached and what was needed.
// Like a stall (StallError), it is never a pass: it counts against
// --max-skips.
func Inconclusivef(format string, a ...any) error {
	return &SkipError{Reason: Inconclusive + fmt.Sprintf(format, a...)}
}

// Inconclusive begins the reason of every skip that says the case could
// not tell (Inconclusivef, StallError).
const Inconclusive = "inconclusive: "

// Precondition turns an error met while setting up a case (a fixture, a
// room to join) into a skip, so that a case never fails for a problem that
// another case owns. A VerifyError's text is kept as the reason, and the
// owning case (Owner, see Owned) is kept for the runner to name.
func Precondition(what string, err error) error {
	if err == nil {
		return nil
	}
	var s *SkipError
	if errors.As(err, &s) {
		return &SkipError{Reason: what + ": " + s.Reason, Owner: s.Owner}
	}
	var v *VerifyError
	if errors.As(err, &v) {
		return &SkipError{Reason: fmt.Sprintf("%s: expected %s, got %s", what, v.Expected, v.Actual), Owner: v.Owner}
	}
	return &SkipError{Reason: what + ": " + err.Error(), Owner: ownerIn(err)}
}

// SkipFor is Skipf for a skip caused by err: it keeps the case err is
// owned by (Owned), so the skip names it.
func SkipFor(err error, format string, a ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, a...), Owner: ownerIn(err)}
}

// judge turns a case's returned error into a verdict (reports.Verdict*),
// expected and actual: a skip's reason is its actual.
func judge(level Level, err error) (verdict, expected, actual string) {
	if err == nil {
		if level == Info {
			return result.VerdictInfo, "", ""
		}
		return result.VerdictPass, "", ""
	}
	var s *SkipError
	if errors.As(err, &s) {
		return result.VerdictSkip, "", s.Reason
	}
	var ve *VerifyError
	if errors.As(err, &ve) {
		if strings.TrimSpace(ve.Actual) == "" {
			// A finding must say what was seen: an empty Actual is the
			// case's bug, and the reader is told so rather than nothing.
			ve.Actual = "(the case recorded nothing of what it saw: see the wire log)"
		}
		l := level
		if ve.Level != 0 {
			l = ve.Level
		}
		switch l {
		case Must:
			return result.VerdictFail, ve.Expected, ve.Actual
		case Should:
			return result.VerdictWarn, ve.Expected, ve.Actual
		default:
			return result.VerdictInfo, ve.Expected, ve.Actual
		}
	}
	return result.VerdictSkip, "", harnessError + err.Error()
}

// harnessError begins the Actual of a case skipped for an error of the
// harness's own.
const harnessError = "harness error: "
