//go:build linux

package engine

import (
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller watches the sockets of closed-model sessions suspended while
// they wait for a reply (simclient.Resumer.SuspendedOn), so that such a
// session holds no goroutine: an epoll instance of its own, each socket
// armed once per suspension (EPOLLONESHOT, its event naming the slot and
// the suspension), and one goroutine that starts the slot whose socket
// became readable (Execution.wake). The epoll descriptor is itself on the
// Go netpoller (it is readable while events are ready), so that goroutine
// parks as any network read does, with no thread blocked in epoll_wait.
// The sockets stay registered with the Go netpoller as well: a descriptor
// may be in several epoll sets, and the kernel drops it from this one
// when it is closed.
//
// Arming costs one epoll_ctl per suspension (two for a socket's first);
// the wake-up, a goroutine hand-off. That is more than a goroutine parked
// on the netpoller, which is why waits suspend only from
// simclient.SuspendWaitsFrom clients on.
type poller struct {
	once   sync.Once
	mu     sync.RWMutex // arm holds it shared; close, to end the descriptor
	epfd   int
	f      *os.File // epfd, on the Go netpoller
	err    error
	closed bool
}

// errPollClosed is arm's error once the run stopped.
var errPollClosed = unix.EBADF

// arm watches fd for slot s's suspension gen, starting the poller on its
// first use. An error means the socket is not watched.
func (p *poller) arm(x *Execution, fd int, s *slot, gen uint32) error {
	p.once.Do(func() { p.err = p.start(x) })
	if p.err != nil {
		return p.err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return errPollClosed
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(s.pos), Pad: int32(gen)}
	err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
	if err == unix.ENOENT {
		err = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	}
	return err
}

// start makes the epoll instance and starts the goroutine that reads it.
func (p *poller) start(x *Execution) error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(epfd), "lobbybench-poller")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	p.mu.Lock()
	p.epfd, p.f = epfd, f
	p.mu.Unlock()
	go p.run(x, rc)
	return nil
}

// run is the poller's goroutine: it starts each slot whose socket became
// readable (or has an error to read), until close.
func (p *poller) run(x *Execution, rc interface {
	Read(func(fd uintptr) bool) error
}) {
	evs := make([]unix.EpollEvent, startBurst)
	var n int
	var werr error
	read := func(fd uintptr) bool {
		// Never blocks (timeout 0): Read parks on the netpoller until
		// the epoll descriptor is readable when nothing is ready.
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
		switch e {
		case 0:
			n = int(r)
			return r > 0
		case unix.EAGAIN, unix.EINTR:
			return false
		}
		werr = e
		return true
	}
	for {
		if rc.Read(read) != nil || werr != nil {
			// Closed, or an epoll error (not expected): later arms fail,
			// so those clients park their waits (ParkWaits); those armed
			// already resume at their deadlines and at the stop.
			p.close()
			return
		}
		for _, ev := range evs[:n] {
			x.wakePos(int(ev.Fd), uint32(ev.Pad))
		}
		// Let the slots just started run before taking more events
		// (runClosed's startBurst).
		runtime.Gosched()
	}
}

// close stops the poller: the run is stopping (wakeSuspended).
func (p *poller) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.f != nil {
		p.f.Close() // wakes run's Read with an error
	}
}
