package reports

import "github.com/lobbybench/lobbybench/result"

// thresholdVerdict is th's verdict in one of three words: pass, fail or
// harness-bound (result.Run.HarnessBound).
func thresholdVerdict(r *result.Run, th result.ThresholdResult, pass, fail, bound string) string {
	if th.Pass {
		return pass
	}
	if _, ok := r.HarnessBound(th); ok {
		return bound
	}
	return fail
}
