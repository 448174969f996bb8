package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// ownedProcess is a server lobbybench owned over passingRun's 2 s: three
// samples a second apart, 600 ms of CPU, stopped cleanly at the end.
func ownedProcess() *result.TargetProcess {
	return &result.TargetProcess{Command: "./lobbyd --port 7777", PIDs: []int{4242}, Starts: 1,
		Exits: []string{"exited with status 0"}, Stop: "stopped on SIGTERM: exited with status 0",
		PeakRSSBytes: 48 << 20, CPUNS: 600 * time.Millisecond,
		Samples: []result.ProcSample{
			{OffsetNS: 0, UserNS: 100 * time.Millisecond, SystemNS: 20 * time.Millisecond, RSSBytes: 20 << 20, Threads: 6, OpenFDs: 9},
			{OffsetNS: time.Second, UserNS: 400 * time.Millisecond, SystemNS: 80 * time.Millisecond, RSSBytes: 40 << 20, Threads: 8, OpenFDs: 57},
			{OffsetNS: 2 * time.Second, UserNS: 600 * time.Millisecond, SystemNS: 120 * time.Millisecond, RSSBytes: 48 << 20, Threads: 8, OpenFDs: 57},
		}}
}

// crashedRun is passingRun against an owned server that aborted at
// +1.2 s and was not back: the outage quotes its exit and last output.
func crashedRun(t testing.TB) *result.Run {
	r := passingRun(t)
	tp := ownedProcess()
	tp.Samples, tp.Exits, tp.Stop = tp.Samples[:2], []string{"killed by SIGABRT"}, ""
	r.TargetProcess = tp
	r.Outages = []result.Outage{{StartNS: 1200 * time.Millisecond, LastUpNS: 1100 * time.Millisecond, Kind: result.DownExited,
		Exit: "killed by SIGABRT", AnsweredBefore: 145,
		Output: []string{"lobbyd: assertion failed: room != NULL", "SIGABRT: abort"}}}
	r.NoteTargetDown()
	return r
}

// TestTargetCost: CPU per 1,000 requests, the share of a core and the
// peaks, from the process's figures and the run's requests.
func TestTargetCost(t *testing.T) {
	noReq := passingRun(t)
	noReq.Totals.Requests = 0
	noReq.TargetProcess = ownedProcess()
	owned := passingRun(t)
	owned.TargetProcess = ownedProcess()
	noFDs := passingRun(t)
	noFDs.TargetProcess = ownedProcess()
	for i := range noFDs.TargetProcess.Samples {
		noFDs.TargetProcess.Samples[i].OpenFDs = -1
	}
	tests := []struct {
		name string
		run  *result.Run
		ok   bool
		want result.TargetCost
	}{
		{"none", passingRun(t), false, result.TargetCost{}},
		// 600 ms over 150 requests in 2 s.
		{"owned", owned, true, result.TargetCost{CPU: 600 * time.Millisecond, Requests: 150, PerThousand: 4 * time.Second, CoreShare: 0.3,
			PeakRSSBytes: 48 << 20, PeakThreads: 8, PeakOpenFDs: 57, Samples: 3}},
		{"no request", noReq, true, result.TargetCost{CPU: 600 * time.Millisecond, CoreShare: 0.3, PeakRSSBytes: 48 << 20, PeakThreads: 8, PeakOpenFDs: 57, Samples: 3}},
		{"fds unreadable", noFDs, true, result.TargetCost{CPU: 600 * time.Millisecond, Requests: 150, PerThousand: 4 * time.Second, CoreShare: 0.3,
			PeakRSSBytes: 48 << 20, PeakThreads: 8, PeakOpenFDs: -1, Samples: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.run.TargetCost()
			if ok != tt.ok || got != tt.want {
				t.Errorf("TargetCost() = %+v, %v\nwant %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestTargetLines: the summary lines say how the process ended, its cost
// and what the figures include.
func TestTargetLines(t *testing.T) {
	embedded := passingRun(t)
	embedded.TargetProcess = &result.TargetProcess{Command: "embedded (in lobbybench's process)", PIDs: []int{7}, Starts: 1, CPUNS: 30 * time.Millisecond,
		PeakRSSBytes: 10 << 20, Samples: []result.ProcSample{{RSSBytes: 10 << 20, Threads: 5, OpenFDs: 12}}, Note: "these figures include the load generator's own work"}
	noReq := passingRun(t)
	noReq.Totals.Requests = 0
	noReq.TargetProcess = ownedProcess()
	tests := []struct {
		name string
		run  *result.Run
		want []string
	}{
		{"none", passingRun(t), nil},
		{"crashed", crashedRun(t), []string{"./lobbyd --port 7777 (pid 4242); ended on its own: killed by SIGABRT", "CPU: 4.00s per 1,000 requests (600.00ms over 150 requests; 30.0% of a core on average)", "Memory: peak RSS 48.0 MiB; up to 8 threads, 57 open files (2 samples)"}},
		{"embedded", embedded, []string{"embedded (in lobbybench's process) (pid 7)", "CPU: 200.00ms per 1,000 requests (30.00ms over 150 requests; 1.5% of a core on average)", "Memory: peak RSS 10.0 MiB; up to 5 threads, 12 open files (1 samples)", "Note: these figures include the load generator's own work"}},
		{"no request", noReq, []string{"./lobbyd --port 7777 (pid 4242); at the end stopped on SIGTERM: exited with status 0", "CPU: 600.00ms, no request completed (30.0% of a core on average)", "Memory: peak RSS 48.0 MiB; up to 8 threads, 57 open files (3 samples)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TargetLines(tt.run)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestTargetGolden: the terminal table, the Markdown and the HTML of a
// run against an owned server, stopped cleanly and crashed.
func TestTargetGolden(t *testing.T) {
	owned := passingRun(t)
	owned.TargetProcess = ownedProcess()
	crashed := crashedRun(t)
	tests := []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"run_owned_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, owned) }},
		{"run_owned.md", func(b *bytes.Buffer) error { return WriteRunMarkdown(b, owned) }},
		{"run_owned.html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, owned) }},
		{"run_crashed_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, crashed) }},
		{"run_crashed.md", func(b *bytes.Buffer) error { return WriteRunMarkdown(b, crashed) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tt.file, ".html") {
				for _, s := range []string{"Server CPU", "Server memory (RSS)", "4.00s per 1,000 requests"} {
					if !strings.Contains(b.String(), s) {
						t.Errorf("HTML lacks %q", s)
					}
				}
				checkHTMLGolden(t, tt.file, b.Bytes())
				return
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
		})
	}
}

// TestTargetCharts: the CPU line is the CPU used between two samples
// over the time between them, in % of a core; a restart breaks both
// lines.
func TestTargetCharts(t *testing.T) {
	tp := ownedProcess()
	tp.Samples = append(tp.Samples, result.ProcSample{OffsetNS: 3 * time.Second, UserNS: 10 * time.Millisecond, RSSBytes: 8 << 20, Threads: 3, Restarted: true},
		result.ProcSample{OffsetNS: 4 * time.Second, UserNS: 260 * time.Millisecond, RSSBytes: 9 << 20, Threads: 3})
	charts := targetCharts(tp, 4*time.Second, span{}, nil, 960)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want CPU and RSS", len(charts))
	}
	// 360 ms in the first second (36%), 240 ms in the second, then 250 ms
	// after the restart: the peak is 36.0%.
	if !strings.Contains(string(charts[0]), "peak 36.0%") {
		t.Errorf("CPU chart:\n%s", charts[0])
	}
	for i, c := range charts {
		if n := strings.Count(string(c), " M"); n < 1 {
			t.Errorf("chart %d: no line break at the restart (subpaths %d)", i, n)
		}
	}
	if targetCharts(nil, time.Second, span{}, nil, 960) != nil || targetCharts(&result.TargetProcess{}, time.Second, span{}, nil, 960) != nil {
		t.Error("charts without samples")
	}
}
