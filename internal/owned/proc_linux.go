package owned

import (
	"time"

	"github.com/prometheus/procfs"
)

// userHZ is the kernel's clock tick for /proc/PID/stat times (USER_HZ,
// 100 on every Linux lobbybench runs on; procfs assumes the same).
const userHZ = 100

func readProc(pid int) (reading, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return reading{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return reading{}, err
	}
	fds, err := p.FileDescriptorsLen()
	if err != nil {
		fds = -1
	}
	return reading{
		user:    time.Duration(st.UTime) * time.Second / userHZ,
		system:  time.Duration(st.STime) * time.Second / userHZ,
		rss:     int64(st.ResidentMemory()),
		threads: st.NumThreads,
		fds:     fds,
	}, nil
}

// CanSample says whether this system can sample processes (nil on Linux).
func CanSample() error { return nil }
