package metrics

import (
	"reflect"
	"testing"
	"time"
)

// TestFailuresIn: the failure timeline sums step failures by reason and
// names the steps that failed within an interval, to FailResolution;
// message-type failures stay out, as they do of the totals.
func TestFailuresIn(t *testing.T) {
	c := NewCollector(t0)
	create, join := c.Step("create"), c.Step("join")
	msg := c.Message("JoinReply")
	r1, r2 := c.NewRecorder(), c.NewRecorder()
	r1.Fail(create, "timeout", at(500*time.Millisecond))
	r1.Fail(join, "conn_refused", at(1250*time.Millisecond))
	r2.Fail(join, "conn_refused", at(1300*time.Millisecond))
	r2.Fail(join, "creator_failed", at(2*time.Second))
	r2.Fail(msg, "timeout", at(1300*time.Millisecond))
	tests := []struct {
		name     string
		from, to time.Duration
		want     map[string]int64
		steps    []string
	}{
		{"all, no end", 0, 0, map[string]int64{"timeout": 1, "conn_refused": 2, "creator_failed": 1}, []string{"create", "join"}},
		{"from the last up, rounded down to the slot", 1350 * time.Millisecond, 0, map[string]int64{"conn_refused": 1, "creator_failed": 1}, []string{"join"}},
		{"closed interval", time.Second, 2 * time.Second, map[string]int64{"conn_refused": 2}, []string{"join"}},
		{"nothing", 3 * time.Second, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, steps := c.FailuresIn(tt.from, tt.to)
			if !reflect.DeepEqual(got, tt.want) || !reflect.DeepEqual(steps, tt.steps) {
				t.Errorf("FailuresIn(%v, %v) = %v, %v; want %v, %v", tt.from, tt.to, got, steps, tt.want, tt.steps)
			}
		})
	}
}
