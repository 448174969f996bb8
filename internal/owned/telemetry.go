package owned

import (
	"os"
	"slices"
	"sync"
	"time"
)

// EmbeddedCommand is the Command of the embedded reference server's
// Telemetry.
const EmbeddedCommand = "embedded (in lobbybench's process)"

// maxSamples bounds the samples kept: past it every other one is dropped
// (a restart's first sample is always kept) and later readings are kept
// half as often, so a day-long run keeps its whole shape in bounded
// memory. Peak RSS and CPU time still come from every reading.
const maxSamples = 4096

// Sample is one reading of a process from /proc, taken about once a
// second. CPU times are cumulative since the process started.
type Sample struct {
	OffsetNS  time.Duration // since the account's epoch
	UserNS    time.Duration
	SystemNS  time.Duration
	RSSBytes  int64
	Threads   int
	OpenFDs   int
	Restarted bool // first sample of a new process
}

// Telemetry is what an owned process did and cost. It is the figures of
// result.TargetProcess, which the caller builds from it: owned knows no
// result model.
type Telemetry struct {
	Command string
	PIDs    []int // one per start
	Starts  int   // 1 + restarts
	Exits   []string
	Samples []Sample
	// PeakRSSBytes is the largest RSS sampled.
	PeakRSSBytes int64
	// CPUNS is the user+system CPU time used, summed over the processes.
	CPUNS time.Duration
}

// reading is one look at a process in /proc.
type reading struct {
	user, system time.Duration // cumulative since the process started
	rss          int64
	threads      int
	fds          int
}

// account builds a Telemetry from starts, readings and exits.
type account struct {
	mu      sync.Mutex
	epoch   time.Time
	tp      Telemetry
	cpu     []time.Duration // per process: the most it was seen to have used
	base    time.Duration   // CPU already used when counting began (self sampling)
	sampled []bool          // per process: has it a sample yet
	stride  int             // keep one reading in stride
	seen    int             // readings since the last kept one
}

func newAccount(command string, epoch time.Time) *account {
	return &account{epoch: epoch, tp: Telemetry{Command: command, Samples: []Sample{}}, stride: 1}
}

func (a *account) started(n, pid int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tp.PIDs = append(a.tp.PIDs, pid)
	a.tp.Starts++
	for len(a.cpu) <= n {
		a.cpu = append(a.cpu, 0)
		a.sampled = append(a.sampled, false)
	}
}

// sample records process n's reading. A restarted process's CPU counts
// from 0 again; each process's counter is kept apart and summed.
func (a *account) sample(n int, r reading, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n >= len(a.cpu) {
		return
	}
	a.cpu[n] = max(a.cpu[n], r.user+r.system)
	a.tp.PeakRSSBytes = max(a.tp.PeakRSSBytes, r.rss)
	first := !a.sampled[n]
	a.sampled[n] = true
	a.seen++
	if !first && a.seen < a.stride {
		return
	}
	a.seen = 0
	a.tp.Samples = append(a.tp.Samples, Sample{
		OffsetNS: at.Sub(a.epoch), UserNS: r.user, SystemNS: r.system,
		RSSBytes: r.rss, Threads: r.threads, OpenFDs: r.fds,
		Restarted: first && n > 0,
	})
	if len(a.tp.Samples) >= maxSamples {
		kept := a.tp.Samples[:0]
		for i, s := range a.tp.Samples {
			if i%2 == 0 || s.Restarted {
				kept = append(kept, s)
			}
		}
		a.tp.Samples = kept
		a.stride *= 2
	}
}

// exited records how process n ended and the CPU time the kernel says it
// used (exact, where the last reading may be up to a second old).
func (a *account) exited(n int, words string, cpu time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tp.Exits = append(a.tp.Exits, words)
	if n < len(a.cpu) {
		a.cpu[n] = max(a.cpu[n], cpu)
	}
}

func (a *account) snapshot() Telemetry {
	a.mu.Lock()
	defer a.mu.Unlock()
	tp := a.tp
	tp.PIDs = slices.Clone(tp.PIDs)
	tp.Exits = slices.Clone(tp.Exits)
	tp.Samples = slices.Clone(tp.Samples)
	var sum time.Duration
	for _, c := range a.cpu {
		sum += c
	}
	tp.CPUNS = max(0, sum-a.base)
	return tp
}

// SelfSampler samples lobbybench's own process, where the embedded
// reference server runs. Its CPUNS counts from when sampling began; note
// that it includes the load generator's own work, which shares the
// process.
type SelfSampler struct {
	acct *account
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// SampleSelf starts sampling the current process every interval (0 =
// 1s), offsets counting from epoch (zero = now). It returns an error
// where /proc cannot be read.
func SampleSelf(interval time.Duration, epoch time.Time) (*SelfSampler, error) {
	if interval <= 0 {
		interval = DefaultSampleEvery
	}
	if epoch.IsZero() {
		epoch = time.Now()
	}
	pid := os.Getpid()
	r, err := readProc(pid)
	if err != nil {
		return nil, err
	}
	s := &SelfSampler{acct: newAccount(EmbeddedCommand, epoch), stop: make(chan struct{}), done: make(chan struct{})}
	s.acct.started(0, pid)
	s.acct.base = r.user + r.system
	s.acct.cpu[0] = s.acct.base
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-t.C:
				if r, err := readProc(pid); err == nil {
					s.acct.sample(0, r, now)
				}
			}
		}
	}()
	return s, nil
}

// Snapshot is what the process has used so far; safe at any time.
func (s *SelfSampler) Snapshot() Telemetry { return s.acct.snapshot() }

// Stop ends the sampling (idempotent) with a last reading, so a run
// shorter than the interval still has its figures, and returns the final
// snapshot.
func (s *SelfSampler) Stop() Telemetry {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		if r, err := readProc(os.Getpid()); err == nil {
			s.acct.sample(0, r, time.Now())
		}
	})
	<-s.done
	return s.Snapshot()
}
