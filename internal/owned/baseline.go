package owned

import "time"

// Baseline starts the process's accounting over at epoch, the run's
// start: the samples taken so far (its start-up) are dropped, a reading
// taken now becomes the first sample (offset now-epoch), and CPUNS and
// the peaks count from it. A run calls it as its load begins, so what the
// report says is what the load cost the server, not its start-up.
func (p *Process) Baseline(epoch time.Time) {
	inc := p.current()
	r, err := readProc(inc.pid)
	p.acct.rebase(epoch, inc.n, r, err == nil, time.Now())
}

// SampleNow takes a reading of the current process at once (as the load
// ends), so a run shorter than SampleEvery still has its figures.
func (p *Process) SampleNow() {
	inc := p.current()
	select {
	case <-inc.exited:
		return
	default:
	}
	if r, err := readProc(inc.pid); err == nil {
		p.acct.sample(inc.n, r, time.Now())
	}
}

// rebase restarts the account at epoch with process n's reading r (ok:
// r was read) as its first sample.
func (a *account) rebase(epoch time.Time, n int, r reading, ok bool, now time.Time) {
	a.mu.Lock()
	a.epoch = epoch
	a.tp.Samples = a.tp.Samples[:0:0]
	a.tp.PeakRSSBytes = 0
	a.stride, a.seen = 1, 0
	for i := range a.sampled {
		a.sampled[i] = i != n || !ok
	}
	if ok && n < len(a.cpu) {
		a.cpu[n] = max(a.cpu[n], r.user+r.system)
	}
	var sum time.Duration
	for _, c := range a.cpu {
		sum += c
	}
	a.base = sum
	a.mu.Unlock()
	if ok {
		a.sample(n, r, now)
	}
}
