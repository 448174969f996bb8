package main

import (
	"fmt"
	"strings"
	"time"
)

// DefaultStartAtMaxWait bounds how far ahead --start-at may be
// (--start-at-max-wait): a shard given a start hours away is a mistake
// (a wrong date, a time zone), not a plan to wait.
const DefaultStartAtMaxWait = 10 * time.Minute

// parseStartAt reads --start-at: an RFC 3339 time
// (2026-11-26T20:00:00Z, fractions of a second allowed) or an offset from
// now ("+30s", any time.ParseDuration of 0 or more after the plus).
func parseStartAt(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time (2026-11-26T20:00:00Z) or an offset from now (+30s)", v)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time (2026-11-26T20:00:00Z) or an offset from now (+30s)", v)
	}
	return t, nil
}

// checkStartAt bounds a start instant against now: no further ahead than
// maxWait (--start-at-max-wait), and not so far behind that the run of
// the given duration is already over (a start in the past within it
// joins late: the arrivals due before are counted as missed).
func checkStartAt(at, now time.Time, maxWait, runDuration time.Duration) error {
	stamp := at.UTC().Format(time.RFC3339Nano)
	if ahead := at.Sub(now); ahead > maxWait {
		return fmt.Errorf("--start-at %s is %v away, over --start-at-max-wait %v (raise it if the wait is meant)", stamp, ahead.Round(time.Second), maxWait)
	}
	if behind := now.Sub(at); behind > runDuration {
		return fmt.Errorf("--start-at %s is %v in the past, more than the run's duration (%v): nothing of its schedule is left to run", stamp, behind.Round(time.Second), runDuration)
	}
	return nil
}
