package tcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// Server is the reference TCP lobby of tcp-lobby.md. Create it with Listen, run
// it with Serve, stop it with Close. All methods are safe for concurrent use.
type Server struct {
	cfg   Config
	ln    net.Listener
	log   *slog.Logger
	epoch time.Time // monotonic base of conn.lastRead
	st    counters

	// mu guards the lobby: connections, rooms, memberships. Nothing under
	// mu blocks on a socket: frames are queued with non-blocking sends and
	// written by each connection's own writer goroutine.
	mu        sync.Mutex
	closed    bool
	conns     map[*conn]struct{} // live: goroutines not finished
	connsByIP map[netip.Addr]int // live connections by source IP
	roomsByIP map[netip.Addr]int // rooms by the IP of the connection that created them
	rooms     []*room            // in creation order
	lastRoom  uint32
	doomed    []doomedConn // queue overflows found under mu, dropped by unlock
	toClose   []net.Conn   // sockets to close once mu is released
	serving   atomic.Bool
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	connWG    sync.WaitGroup // connection goroutines
	loopWG    sync.WaitGroup // accept loop and sweeper
	allocWG   sync.WaitGroup // countdown ends calling the pool
}

type doomedConn struct {
	c   *conn
	why closeReason
}

// Listen validates cfg, fills its defaults and binds the listening socket;
// Addr is valid when it returns. Serve must be called to accept connections.
func Listen(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		ln:        ln,
		log:       cfg.Logger,
		epoch:     time.Now(),
		conns:     make(map[*conn]struct{}),
		connsByIP: make(map[netip.Addr]int),
		roomsByIP: make(map[netip.Addr]int),
		done:      make(chan struct{}),
	}
	s.log.Info("tcp lobby listening", "addr", ln.Addr().String())
	return s, nil
}

// Addr returns the listening address (with the chosen port when Config.Addr
// asked for port 0).
func (s *Server) Addr() netip.AddrPort {
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok {
		return a.AddrPort()
	}
	return netip.AddrPort{}
}

// Config returns the configuration in use, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	st := s.st.snapshot()
	s.mu.Lock()
	st.RoomsActive = len(s.rooms)
	st.ConnIPs = len(s.connsByIP)
	st.RoomOwners = len(s.roomsByIP)
	s.mu.Unlock()
	return st
}

// Serve accepts connections until ctx is done or Close is called, then
// closes the server (as Close does) and returns nil. It returns an error at
// once when called twice.
func (s *Server) Serve(ctx context.Context) error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("tcp: Serve called twice")
	}
	// Add under mu, only while open: Close sets closed under mu before it
	// waits, so a Close racing with Serve's start is safe.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.loopWG.Add(2)
	s.mu.Unlock()
	go func() {
		defer s.loopWG.Done()
		s.sweep()
	}()
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	defer s.loopWG.Done()
	backoff := time.Duration(0)
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil // only Close closes the listener
			}
			// EMFILE, ECONNABORTED, …: back off like net/http and keep serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("tcp accept failed", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-s.done:
				return nil
			}
			continue
		}
		backoff = 0
		s.accept(nc)
	}
}

func (s *Server) accept(nc net.Conn) {
	c, refusal := s.register(nc)
	if c == nil {
		if refusal != "" {
			// One best-effort ERROR_MSG (tcp-lobby.md §7.1) on a fresh socket
			// whose send buffer is empty: the write does not block.
			nc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			nc.Write(errorFrame(tcpwire.ErrCodeServerError, refusal))
		}
		nc.Close()
		return
	}
	if s.cfg.SendBuffer > 0 {
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetWriteBuffer(s.cfg.SendBuffer)
		}
	}
	if s.debug() {
		s.log.Debug("tcp conn open", "remote", nc.RemoteAddr().String())
	}
	go c.writeLoop()
	go c.readLoop()
}

// register admits nc as a connection (its two goroutines counted in
// connWG, to be started by the caller), or returns nil and the ERROR_MSG
// text to refuse it with ("" when the server is closed): MaxConns in all,
// MaxConnsPerIP from its source IP.
func (s *Server) register(nc net.Conn) (*conn, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ""
	}
	ip := remoteIP(nc)
	if len(s.conns) >= s.cfg.MaxConns {
		s.st.connsRejected.Add(1)
		return nil, "server full: too many connections"
	}
	if s.cfg.MaxConnsPerIP > 0 && s.connsByIP[ip] >= s.cfg.MaxConnsPerIP {
		s.st.connsRejectedPerIP.Add(1)
		return nil, "too many connections from your address"
	}
	c := newConn(s, nc)
	c.ip = ip
	s.conns[c] = struct{}{}
	count(s.connsByIP, ip, 1)
	s.connWG.Add(2)
	s.st.connsAccepted.Add(1)
	s.st.connsActive.Add(1)
	return c, ""
}

// forget removes a connection whose goroutines are done.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	count(s.connsByIP, c.ip, -1)
	s.mu.Unlock()
	s.st.connsActive.Add(-1)
}

// remoteIP is nc's peer address, unmapped (the zero Addr if unknown).
func remoteIP(nc net.Conn) netip.Addr {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// count moves ip's entry of a per-IP quota table by delta; an IP at zero
// leaves the table, so it is bounded by the connections or rooms that
// exist. Called with mu held.
func count(m map[netip.Addr]int, ip netip.Addr, delta int) {
	if n := m[ip] + delta; n > 0 {
		m[ip] = n
	} else {
		delete(m, ip)
	}
}

// sweep closes idle connections: one ticker for the whole server instead of
// a read deadline reset per frame.
func (s *Server) sweep() {
	if s.cfg.IdleTimeout <= 0 {
		return
	}
	tick := min(max(s.cfg.IdleTimeout/4, 5*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		cutoff := s.now() - int64(s.cfg.IdleTimeout)
		s.mu.Lock()
		for c := range s.conns {
			if !c.closed && c.lastRead.Load() < cutoff {
				s.dropLocked(c, closeIdle, errorFrame(tcpwire.ErrCodeServerError, "idle timeout"), true)
				// Wake a reader stuck inside a half-sent frame.
				c.nc.SetReadDeadline(time.Now().Add(s.cfg.Linger))
			}
		}
		s.unlock()
	}
}

// debug reports whether Debug logs are wanted, so their arguments are not
// built for nothing.
func (s *Server) debug() bool { return s.log.Enabled(context.Background(), slog.LevelDebug) }

// now returns monotonic nanoseconds since the server started.
func (s *Server) now() int64 { return int64(time.Since(s.epoch)) }

// Close stops accepting, tells every connected client (ERROR_MSG 0x06
// "server shutting down"), closes every connection and cancels every
// countdown. It waits for the connection goroutines (at most about
// min(WriteTimeout, 1s) for clients that do not read, then it closes what
// is left) and for any pool call in flight, so the pool may be closed once
// it returns. It is idempotent, safe before, during or after Serve, and
// returns nil.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ln.Close()
		s.mu.Lock()
		s.closed = true
		for _, r := range s.rooms {
			r.stopTimer()
		}
		now := time.Now()
		for c := range s.conns {
			s.dropLocked(c, closeShutdown, errorFrame(tcpwire.ErrCodeServerError, "server shutting down"), true)
			c.nc.SetReadDeadline(now)
		}
		s.unlock()
		waited := make(chan struct{})
		go func() {
			s.connWG.Wait()
			close(waited)
		}()
		select {
		case <-waited:
		case <-time.After(min(s.cfg.WriteTimeout, time.Second) + 100*time.Millisecond):
			s.mu.Lock()
			for c := range s.conns {
				c.nc.Close()
			}
			s.mu.Unlock()
			<-waited
		}
		s.loopWG.Wait()
		// No Allocate or Release runs after Close returns: the pool may
		// be closed next.
		s.allocWG.Wait()
		s.log.Info("tcp lobby closed")
	})
	return nil
}

// unlock drops the connections whose queues overflowed while mu was held
// (each drop may overflow more queues with its PLAYER_LEFT broadcast, so
// this loops), releases mu, then closes the sockets of hard drops.
func (s *Server) unlock() {
	for len(s.doomed) > 0 {
		d := s.doomed[len(s.doomed)-1]
		s.doomed = s.doomed[:len(s.doomed)-1]
		s.dropLocked(d.c, d.why, nil, false)
	}
	close := s.toClose
	s.toClose = nil
	s.mu.Unlock()
	for _, nc := range close {
		nc.Close()
	}
}
