package engine

import (
	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/result"
)

// TargetProcess is the result model's account of an owned process's
// telemetry (a --target-cmd server, or the embedded one sampled in
// lobbybench's own process), with note saying what its figures include
// ("" when they are the server's alone).
func TargetProcess(t owned.Telemetry, note string) *result.TargetProcess {
	samples := make([]result.ProcSample, len(t.Samples))
	for i, s := range t.Samples {
		samples[i] = result.ProcSample(s)
	}
	return &result.TargetProcess{
		Command: t.Command, PIDs: t.PIDs, Starts: t.Starts, Exits: t.Exits, Samples: samples,
		PeakRSSBytes: t.PeakRSSBytes, CPUNS: t.CPUNS, Note: note,
	}
}
