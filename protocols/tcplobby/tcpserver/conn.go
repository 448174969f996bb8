package tcpserver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// maxBatch bounds how many queued bytes one write system call carries.
const maxBatch = 16 << 10

// conn is one client connection: a reader goroutine that decodes frames and
// runs the lobby under Server.mu, and a writer goroutine that drains the
// bounded out queue with a deadline on every write.
type conn struct {
	s          *Server
	nc         net.Conn
	out        chan []byte   // frames (length prefix included); closed by dropLocked
	writerDone chan struct{} // closed when writeLoop returns
	lastRead   atomic.Int64  // Server.now() of the last complete frame
	ip         netip.Addr    // source IP, counted in Server.connsByIP

	// Guarded by Server.mu.
	closed   bool // dropLocked ran: out is closed, nothing more is queued
	graceful bool // set before out is closed: flush, then shut the write side
	doomed   bool // queued in Server.doomed
	hash     uint64
	name     tcpwire.Name
	room     *room
	member   *member
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		s:          s,
		nc:         nc,
		out:        make(chan []byte, s.cfg.MaxQueue),
		writerDone: make(chan struct{}),
	}
	c.lastRead.Store(s.now())
	return c
}

// sendLocked queues frame f without blocking. A full queue dooms the
// connection: it is dropped (hard) when the lock is released.
func (s *Server) sendLocked(c *conn, f []byte) {
	if c.closed || c.doomed {
		return
	}
	select {
	case c.out <- f:
	default:
		c.doomed = true
		s.doomed = append(s.doomed, doomedConn{c, closeQueueOverflow})
	}
}

// dropLocked ends c once: final (if any) is queued last, c leaves its room
// (the remaining members are told), and its queue is closed. graceful lets
// the writer flush the queue and shut the write side (the reader then
// lingers); otherwise the socket is closed as soon as mu is released.
func (s *Server) dropLocked(c *conn, why closeReason, final []byte, graceful bool) {
	if c.closed {
		return
	}
	if final != nil {
		s.sendLocked(c, final)
	}
	c.closed = true
	s.st.closes[why].Add(1)
	s.leaveLocked(c)
	c.graceful = graceful
	close(c.out)
	if !graceful {
		s.toClose = append(s.toClose, c.nc)
	}
	if s.debug() {
		s.log.Debug("tcp conn closing", "remote", c.nc.RemoteAddr().String(), "reason", closeNames[why])
	}
}

// writeLoop writes queued frames, batching what is already queued into one
// write, each write bounded by WriteTimeout.
func (c *conn) writeLoop() {
	s := c.s
	defer s.connWG.Done()
	defer close(c.writerDone)
	buf := make([]byte, 0, 1024)
	for f := range c.out {
		buf = append(buf[:0], f...)
	batch:
		for len(buf) < maxBatch {
			select {
			case f, ok := <-c.out:
				if !ok {
					break batch
				}
				buf = append(buf, f...)
			default:
				break batch
			}
		}
		c.nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
		if _, err := c.nc.Write(buf); err != nil {
			why := closeWriteError
			if errors.Is(err, os.ErrDeadlineExceeded) {
				why = closeWriteTimeout
			}
			s.mu.Lock()
			s.dropLocked(c, why, nil, false)
			s.unlock()
			c.nc.Close()
			return
		}
		for off := 0; off+tcpwire.HeaderSize < len(buf); {
			s.st.framesOut[buf[off+tcpwire.HeaderSize]].Add(1)
			off += tcpwire.HeaderSize + int(binary.LittleEndian.Uint32(buf[off:]))
		}
	}
	// out is closed: graceful was written before the close.
	if c.graceful {
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}
}

// readLoop reads and dispatches frames until the connection ends, then
// tears it down.
func (c *conn) readLoop() {
	s := c.s
	defer s.connWG.Done()
	br := bufio.NewReaderSize(c.nc, 512)
	fr := tcpwire.NewFrameReader(br, s.cfg.MaxFrame)
	for {
		p, err := fr.Next()
		if err != nil {
			c.readFailed(err, fr.Length)
			break
		}
		c.lastRead.Store(s.now())
		s.st.framesIn[p[0]].Add(1)
		if !s.handle(c, p) {
			break
		}
	}
	s.mu.Lock()
	graceful, linger := c.graceful, s.cfg.Linger
	if s.closed {
		linger = min(linger, 100*time.Millisecond) // shutting down: do not hold Close
	}
	s.unlock()
	if graceful {
		// Keep reading (and discarding) until the peer closes or Linger
		// passes, so the ERROR_MSG and FIN the writer sends are not
		// overtaken by a reset caused by unread input.
		c.nc.SetReadDeadline(time.Now().Add(linger))
		io.Copy(io.Discard, io.LimitReader(br, 1<<20))
	}
	<-c.writerDone
	c.nc.Close()
	s.forget(c)
}

// readFailed classifies a read error and drops the connection; framing
// errors get an ERROR_MSG first.
func (c *conn) readFailed(err error, length uint32) {
	s := c.s
	s.mu.Lock()
	defer s.unlock()
	if c.closed {
		return
	}
	switch {
	case errors.Is(err, io.EOF):
		// The peer shut its write side between frames; it may still read.
		s.dropLocked(c, closeEOF, nil, true)
	case tcpwire.RuleOf(err) != "":
		rule := tcpwire.RuleOf(err)
		why := errFrameTruncated
		switch rule {
		case tcpwire.RuleFrameEmpty:
			why = errFrameEmpty
		case tcpwire.RuleFrameTooLarge:
			why = errFrameTooLarge
		}
		s.st.errors[why].Add(1)
		s.dropLocked(c, closeBadFrame, errorFrame(tcpwire.ErrCodeServerError, err.Error()), true)
		if s.debug() {
			s.log.Debug("tcp bad frame", "remote", c.nc.RemoteAddr().String(), "rule", rule, "length", length)
		}
	default:
		s.dropLocked(c, closeReadError, nil, false)
	}
}

// errorFrame encodes ERROR_MSG code/text as a frame.
func errorFrame(code tcpwire.ErrorCode, text string) []byte {
	return frame(tcpwire.NewErrorMsg(code, text))
}

// frame encodes m with its length prefix into a new slice, the only
// allocation of a reply. The type switch calls concrete methods so that m
// itself does not escape to the heap: callers build messages on the stack.
func frame(m tcpwire.Message) []byte {
	switch m := m.(type) {
	case *tcpwire.ListRoomsAck:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.CreateRoomAck:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.JoinRoomAck:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.RoomUpdate:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.ConnectAck:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.PlayerJoin:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.PlayerReady:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.GameStart:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.PlayerLeft:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.Countdown:
		return m.AppendPayload(header(m.Size()))
	case *tcpwire.ErrorMsg:
		return m.AppendPayload(header(m.Size()))
	}
	panic("tcp: frame of a message type the server never sends") // programming error; no m here, so m does not escape
}

// header returns a frame buffer holding the length prefix of a size-byte
// payload, with room for the payload.
func header(size int) []byte {
	b := make([]byte, tcpwire.HeaderSize, tcpwire.HeaderSize+size)
	binary.LittleEndian.PutUint32(b, uint32(size))
	return b
}
