//go:build linux

package main

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/rxbuf"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// refResult is the reference client's figures (µs).
type refResult struct {
	p50, p99, uncorrP50 int64
	// kernelP50: the corrected p50 ending at the kernel's receive stamp
	// (SO_TIMESTAMPNS) instead of recvfrom's return, as lobbybench's end
	// on Linux; 0 when no reply carried a stamp.
	kernelP50 int64
	// lagP50, lagP99: its send lag, the send minus the due time: what
	// this machine's scheduler costs a plain blocking sender.
	lagP50, lagP99 int64
	err            error
}

// runReference is the plain blocking reference client: one UDP socket in
// blocking mode, a sender on a locked OS thread that sleeps in
// clock_nanosleep(2) (timer slack 1 ns) until each request's due time on
// the same open schedule as lobbybench (request k due at k/rate), then
// sendto(2); a receiver on another locked thread blocked in recvmsg(2),
// with the kernel's receive stamp of each reply (SO_TIMESTAMPNS).
// Requests are matched by their 16-bit sequence id; latency is measured
// from the due time (corrected) and from the send (uncorrected). No Go
// netpoller is involved.
func runReference(target netip.AddrPort, rate int, d time.Duration) refResult {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return refResult{err: err}
	}
	defer unix.Close(fd)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	// A receive timeout lets the receiver notice the end of the run.
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100000})
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return refResult{err: err}
	}
	to := &unix.SockaddrInet4{Addr: target.Addr().As4(), Port: int(target.Port())}
	// Sequence ids are 16 bits: at most 65,536 requests (the first 3.3 s
	// at 20,000/s), so an id names one request.
	n := min(int(d.Seconds()*float64(rate)), 1<<16)
	due := make([]time.Time, n)
	sent := make([]time.Time, n)
	done := make([]time.Time, n)
	kdone := make([]time.Time, n) // at the kernel's receive stamp
	start := time.Now().Add(10 * time.Millisecond)
	for k := range due {
		due[k] = start.Add(time.Duration(k) * time.Second / time.Duration(rate))
	}
	var mu sync.Mutex // sent[k] is written before the request leaves, read after its reply
	var wg sync.WaitGroup
	var sendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		buf := make([]byte, 0, 64)
		for k := 0; k < n; k++ {
			if w := time.Until(due[k]); w > 0 {
				ts := unix.NsecToTimespec(int64(w))
				for unix.Nanosleep(&ts, &ts) == unix.EINTR {
				}
			}
			buf = udpwire.AppendListRooms(buf[:0], udpwire.ProfileSpec, uint16(k))
			mu.Lock()
			sent[k] = time.Now()
			mu.Unlock()
			if err := unix.Sendto(fd, buf, 0, to); err != nil {
				sendErr = err
				return
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	got := 0
	end := due[n-1].Add(6 * time.Second)
	for got < n && time.Now().Before(end) {
		m, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
		now := time.Now()
		if err != nil {
			continue // EAGAIN: the receive timeout
		}
		kat, kernel := rxbuf.At(rxbuf.ParseStamp(oob[:oobn]))
		h, err := udpwire.DecodeHeader(buf[:m], udpwire.ProfileSpec)
		if err != nil || h.Type != udpwire.LobbyRoomList {
			continue
		}
		k := int(h.Seq)
		if k < n && done[k].IsZero() {
			done[k] = now
			if kernel {
				kdone[k] = kat
			}
			got++
		}
	}
	wg.Wait()
	if sendErr != nil {
		return refResult{err: sendErr}
	}
	mu.Lock()
	defer mu.Unlock()
	return refStats(due, sent, done, kdone)
}

func cpuSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// stolen is the machine's steal time so far (/proc/stat, all CPUs): time
// a hypervisor gave this machine's CPUs to someone else, during which
// nothing here runs, lobbybench, stub and reference client alike. ok is
// false where it cannot be read.
func stolen() (d time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return parseSteal(string(b))
}

// parseSteal reads the steal time from /proc/stat's text: the eighth
// number of its first line, "cpu  user nice system idle iowait irq
// softirq steal …", in clockTicks.
func parseSteal(stat string) (time.Duration, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	ticks, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil || ticks < 0 {
		return 0, false
	}
	return time.Duration(ticks) * time.Second / clockTicks, true
}

// clockTicks is USER_HZ, /proc/stat's unit: 100 on every Linux ABI Go
// supports.
const clockTicks = 100

// refStats is the reference's figures from each request's due, send and
// reply times (zero: none), the reply's at the kernel's stamp too.
func refStats(due, sent, done, kdone []time.Time) refResult {
	var corr, unc, lag, kern []int64
	for k := range done {
		if done[k].IsZero() {
			continue
		}
		corr = append(corr, done[k].Sub(due[k]).Microseconds())
		if !kdone[k].IsZero() {
			kern = append(kern, kdone[k].Sub(due[k]).Microseconds())
		}
		unc = append(unc, done[k].Sub(sent[k]).Microseconds())
	}
	for k := range sent {
		if !sent[k].IsZero() {
			lag = append(lag, max(sent[k].Sub(due[k]).Microseconds(), 0))
		}
	}
	if len(corr) == 0 {
		return refResult{err: fmt.Errorf("no reply of %d requests", len(due))}
	}
	sort.Slice(corr, func(i, j int) bool { return corr[i] < corr[j] })
	sort.Slice(unc, func(i, j int) bool { return unc[i] < unc[j] })
	sort.Slice(lag, func(i, j int) bool { return lag[i] < lag[j] })
	sort.Slice(kern, func(i, j int) bool { return kern[i] < kern[j] })
	pct := func(xs []int64, p float64) int64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[min(int(float64(len(xs))*p), len(xs)-1)]
	}
	return refResult{p50: pct(corr, 0.5), kernelP50: pct(kern, 0.5), p99: pct(corr, 0.99), uncorrP50: pct(unc, 0.5), lagP50: pct(lag, 0.5), lagP99: pct(lag, 0.99)}
}
