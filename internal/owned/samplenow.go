package owned

import "time"

// SampleNow reads the current process's /proc figures at once, besides
// the periodic samples: a suite shorter than the sampling interval (a
// quick conform run) still gets its CPU, RSS, threads and open files,
// read just before Stop. It does nothing once the process has ended or
// where /proc cannot be read.
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
