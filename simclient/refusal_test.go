package simclient

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

func TestIsRefusal(t *testing.T) {
	ref := &Refusal{Request: "LOBBY_CREATE_ROOM", Reply: "LOBBY_JOIN_FAILED"}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"other", errors.New("timeout"), false},
		{"refusal", ref, true},
		{"a step's cause", &StepError{Index: 1, Reason: "room_full", Err: ref}, true},
		{"wrapped twice", fmt.Errorf("session 3: %w", &StepError{Index: 1, Reason: "room_full", Err: ref}), true},
	}
	for _, c := range cases {
		if got := IsRefusal(c.err); got != c.want {
			t.Errorf("%s: IsRefusal = %v, want %v", c.name, got, c.want)
		}
	}
}

// The engine asks IsRefusal and IsFailedStart about every session that
// ends, successful or not: in a closed loop of 1-step flows, once per
// request. Neither may allocate.
func TestSessionEndChecksDoNotAllocate(t *testing.T) {
	errs := []error{nil, errors.New("timeout"), &StepError{Reason: "timeout", Err: errors.New("no reply")}}
	for _, err := range errs {
		if n := memfig.Allocs(100, func() { _ = IsRefusal(err) }); n != 0 {
			t.Errorf("IsRefusal(%v): %v allocations per call, want 0", err, n)
		}
		if n := memfig.Allocs(100, func() { _ = IsFailedStart(err) }); n != 0 {
			t.Errorf("IsFailedStart(%v): %v allocations per call, want 0", err, n)
		}
	}
}

func BenchmarkIsRefusal(b *testing.B) {
	b.ReportAllocs()
	var n int
	for b.Loop() {
		if IsRefusal(nil) {
			n++
		}
	}
	_ = n
}
