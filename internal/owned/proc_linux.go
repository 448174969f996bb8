package owned

import (
	"errors"
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
	if exiting(st) {
		return reading{}, errExiting
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

// errExiting is a reading of a process that is exiting: not a sample.
var errExiting = errors.New("the process is exiting")

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h).
const pfExiting = 0x4

// exiting reports whether st is of a process on its way out: a zombie, a
// task marked exiting, or one whose memory is already released (no live
// process has no resident page). Read then, its threads, memory and open
// files are the exit's, not the server's (a sample taken as the owned
// server stopped read 0 bytes of RSS and no open file).
func exiting(st procfs.ProcStat) bool {
	return st.State == "Z" || st.State == "X" || st.Flags&pfExiting != 0 || st.RSS == 0
}
