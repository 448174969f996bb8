package metrics

import (
	"testing"
	"time"
)

// BenchmarkRecord measures the hot path from one goroutine, with samples
// spread so that the per-second rollover happens as in a real run.
func BenchmarkRecord(b *testing.B) {
	c := NewCollector(t0)
	k := c.Step("ping")
	r := c.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := time.Duration(i) * 10 * time.Microsecond // 100k samples per second
		r.Record(k, t0.Add(d), t0.Add(d), t0.Add(d+time.Duration(i&4095)*time.Microsecond))
	}
}

// BenchmarkRecordParallel gives each goroutine its own Recorder, as the
// engine does with one Recorder per worker.
func BenchmarkRecordParallel(b *testing.B) {
	c := NewCollector(t0)
	k := c.Step("ping")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := c.NewRecorder()
		i := 0
		for pb.Next() {
			d := time.Duration(i) * 10 * time.Microsecond
			r.Record(k, t0.Add(d), t0.Add(d), t0.Add(d+time.Duration(i&4095)*time.Microsecond))
			i++
		}
	})
}

// BenchmarkRecordParallelShared shares one Recorder among all goroutines:
// the contended worst case.
func BenchmarkRecordParallelShared(b *testing.B) {
	c := NewCollector(t0)
	k := c.Step("ping")
	r := c.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			d := time.Duration(i) * 10 * time.Microsecond
			r.Record(k, t0.Add(d), t0.Add(d), t0.Add(d+time.Duration(i&4095)*time.Microsecond))
			i++
		}
	})
}

func BenchmarkSnapshot(b *testing.B) {
	c := NewCollector(t0)
	for s := 0; s < 8; s++ {
		k := c.Step(string(rune('a' + s)))
		for w := 0; w < 4; w++ {
			r := c.NewRecorder()
			for i := 0; i < 1000; i++ {
				d := time.Duration(i) * time.Millisecond
				r.Record(k, t0.Add(d), t0.Add(d), t0.Add(d+time.Duration(i)*time.Microsecond))
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}
