package tcpclient

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

var (
	errTimeout   = errors.New("timeout")
	errCancelled = simclient.ErrCancelled
)

// frameConn is a TCP connection read as tcplobby frames into one reused
// buffer. Unlike tcplobby.FrameReader it survives read deadlines (the
// sweeper's wakes) in the middle of a frame: bytes read stay in the buffer.
type frameConn struct {
	c     net.Conn
	waker *simclient.Waker
	sw    *simclient.Sweeper
	buf   []byte
	r, w  int
	wbuf  []byte
	err   error // sticky framing error
	// io counts the payload bytes written and read (the session's
	// simclient.Base.IO; moved to the next session with the connection).
	io *simclient.IOCount

	cancelled atomic.Bool
	closed    atomic.Bool
}

// dialContext connects src to dst (a TCP lobby), registered with sw so a
// sweep can wake a blocked read, given up when ctx ends.
func dialContext(ctx context.Context, src, dst net.Addr, sw *simclient.Sweeper, bufSize int, timeout time.Duration) (*frameConn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: src}
	c, err := d.DialContext(ctx, "tcp", dst.String())
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = simclient.SetBuffers(tc, bufSize)
	}
	fc := &frameConn{c: c, sw: sw, buf: make([]byte, 2*(tcpwire.HeaderSize+tcpwire.DefaultMaxFrame)), wbuf: make([]byte, 0, 256)}
	fc.waker = sw.Add(c)
	return fc, nil
}

func (f *frameConn) cancel() {
	f.cancelled.Store(true)
	_ = f.c.SetReadDeadline(time.Now())
}

func (f *frameConn) close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	f.sw.Remove(f.waker)
	return f.c.Close()
}

// write sends m as one frame.
func (f *frameConn) write(m tcpwire.Message) ([]byte, error) {
	f.wbuf = tcpwire.AppendFrame(f.wbuf[:0], m)
	return f.wbuf, f.send(f.wbuf)
}

// send writes frame, counted in io.
func (f *frameConn) send(frame []byte) error {
	n, err := f.c.Write(frame)
	f.io.Sent(n)
	return err
}

// next returns the next frame's payload (type byte first), aliasing the
// buffer until the next call, waiting until deadline (zero: none). Framing
// errors (*tcplobby.Error) are sticky; errTimeout is not.
func (f *frameConn) next(deadline time.Time) ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	for {
		if avail := f.w - f.r; avail >= tcpwire.HeaderSize {
			n := binary.LittleEndian.Uint32(f.buf[f.r:])
			switch {
			case n == 0:
				f.err = &tcpwire.Error{Rule: tcpwire.RuleFrameEmpty, Offset: -1, Msg: "frame length 0"}
				return nil, f.err
			case n > tcpwire.DefaultMaxFrame:
				f.err = &tcpwire.Error{Rule: tcpwire.RuleFrameTooLarge, Offset: -1, Msg: "frame length exceeds 4096"}
				return nil, f.err
			}
			if end := tcpwire.HeaderSize + int(n); avail >= end {
				p := f.buf[f.r+tcpwire.HeaderSize : f.r+end]
				f.r += end
				return p, nil
			}
		}
		if f.r > 0 {
			f.w = copy(f.buf, f.buf[f.r:f.w])
			f.r = 0
		}
		if f.cancelled.Load() {
			return nil, errCancelled
		}
		poll := false
		switch {
		case deadline.IsZero():
			f.waker.Disarm()
		case !time.Now().Before(deadline):
			// The deadline passed: take what already arrived without
			// blocking before calling it a timeout.
			poll = true
			_ = f.c.SetReadDeadline(time.Unix(1, 0))
		case time.Until(deadline) < f.sw.Tick():
			// Closer than the sweeper's resolution: our own deadline.
			poll = true
			_ = f.c.SetReadDeadline(deadline)
		default:
			f.waker.Arm(deadline)
		}
		n, err := f.c.Read(f.buf[f.w:])
		f.w += n
		f.io.Received(n)
		if poll {
			_ = f.c.SetReadDeadline(time.Time{})
		}
		if err != nil {
			if f.cancelled.Load() {
				return nil, errCancelled // closed or woken by Close/cancel
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if poll && n == 0 && !time.Now().Before(deadline) {
					return nil, errTimeout
				}
				_ = f.c.SetReadDeadline(time.Time{})
				continue
			}
			if f.w > f.r && n == 0 {
				// The stream ended inside a frame.
				f.err = &tcpwire.Error{Rule: tcpwire.RuleFrameTruncated, Offset: -1, Msg: "stream ended inside a frame", Err: err}
				return nil, f.err
			}
			return nil, err
		}
	}
}
