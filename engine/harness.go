package engine

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// Harness is what the load generator itself used, so a report shows whether
// the harness could have been the bottleneck. With an embedded reference
// server the process figures include the server. It is the result model's
// result.Harness: the engine fills it, ShardRun carries it as is.
type Harness = result.Harness

// memSampler samples heap and goroutines until stopped.
type memSampler struct {
	mu     sync.Mutex
	h      Harness
	stop   chan struct{}
	done   chan struct{}
	cpu0   float64
	sample []metrics.Sample
}

func startMemSampler(every time.Duration) *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{}), cpu0: cpuSeconds(),
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/sched/goroutines:goroutines"}}}
	m.h.GOMAXPROCS = runtime.GOMAXPROCS(0)
	m.take()
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				m.take()
				return
			case <-t.C:
				m.take()
			}
		}
	}()
	return m
}

func (m *memSampler) take() {
	metrics.Read(m.sample)
	v := func(i int) int64 {
		if m.sample[i].Value.Kind() == metrics.KindUint64 {
			return int64(m.sample[i].Value.Uint64())
		}
		return 0
	}
	m.mu.Lock()
	m.h.PeakHeapBytes = max(m.h.PeakHeapBytes, v(0))
	m.h.PeakGoRuntimeBytes = max(m.h.PeakGoRuntimeBytes, v(1))
	m.h.PeakGoroutines = max(m.h.PeakGoroutines, v(2))
	m.mu.Unlock()
}

// cpuSoFar is the process's CPU time since the sampler started, in
// seconds; 0 where it is not known (cpuSeconds).
func (m *memSampler) cpuSoFar() float64 {
	if c := cpuSeconds(); c > 0 {
		return c - m.cpu0
	}
	return 0
}

// Stop ends sampling and returns the peaks.
func (m *memSampler) Stop() Harness {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.h
	h.PeakRSSBytes = peakRSS()
	h.CPUSeconds = m.cpuSoFar()
	return h
}

// peakRSS reads VmHWM from /proc/self/status (bytes), 0 if unavailable.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) >= 1 {
				kb, err := strconv.ParseInt(fields[0], 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
