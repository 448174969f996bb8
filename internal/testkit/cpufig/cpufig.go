//go:build unix

// Package cpufig measures what a benchmark's requests cost the process in
// CPU: per request it is less sensitive than a rate to other load on a
// shared machine.
package cpufig

import (
	"syscall"
	"testing"
	"time"
)

// Process is the process's user and system CPU time so far.
func Process() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PerRequest reports the CPU the process spent since since (Process's)
// per request, requests of them, as b's cpu-µs/req metric.
func PerRequest(b *testing.B, since time.Duration, requests int) {
	b.ReportMetric(float64(Process()-since)/float64(time.Microsecond)/float64(requests), "cpu-µs/req")
}
