package owned

import (
	"os"
	"testing"

	"github.com/prometheus/procfs"
)

// TestExiting: a reading of a process on its way out (a zombie, a task
// marked exiting, memory released) is not a sample; a live one is, and
// this test's own process reads as live.
func TestExiting(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   procfs.ProcStat
		want bool
	}{
		{"live", procfs.ProcStat{State: "S", RSS: 1000, NumThreads: 9}, false},
		{"running", procfs.ProcStat{State: "R", RSS: 1000, NumThreads: 9}, false},
		{"zombie", procfs.ProcStat{State: "Z", NumThreads: 1}, true},
		{"dead", procfs.ProcStat{State: "X"}, true},
		{"marked exiting", procfs.ProcStat{State: "R", RSS: 1000, NumThreads: 2, Flags: pfExiting}, true},
		{"memory released", procfs.ProcStat{State: "D", RSS: 0, NumThreads: 2}, true},
	} {
		if got := exiting(tc.st); got != tc.want {
			t.Errorf("%s: exiting %v, want %v", tc.name, got, tc.want)
		}
	}
	if r, err := readProc(os.Getpid()); err != nil || r.rss <= 0 {
		t.Errorf("this process: %+v, %v; want a sample", r, err)
	}
}
