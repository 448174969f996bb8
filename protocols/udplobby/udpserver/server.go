package udpserver

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/pktinfo"
	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver/ratelimit"
)

// Server is a running UDP lobby with its pool of game instances.
type Server struct {
	cfg     Config
	log     *slog.Logger
	epoch   time.Time
	conn    *pktinfo.Conn
	addr    netip.AddrPort
	host    netip.Addr // instances bind here (zero: every address)
	adv     netip.Addr // address Allocate hands out
	typeOff int        // offset of the messageType byte in a header
	ldec    udpwire.Decoder
	idec    udpwire.Decoder
	c       counters

	limiter   *ratelimit.Limiter[netip.AddrPort]
	amp       *ratelimit.Limiter[netip.Addr] // the bytes a source IP may still get back (Config.AmplifyAllowance), lobby and instances alike
	sessions  sessionTable                   // owned by the lobby read loop
	nSessions atomic.Int64

	mu       sync.Mutex
	rooms    map[uint32]*instance
	reserved int                // instances being bound, counted against MaxInstances
	slots    []bool             // BasePort > 0: pool slot i (port BasePort+i) in use
	owned    map[netip.Addr]int // live lobby-created rooms (and ones being bound) by creator IP
	held     map[netip.Addr]int // seat holds by lobby client IP (Allocate's are not counted)
	nextID   uint32
	closed   bool
	stale    atomic.Bool    // the lobby loop's cached room list needs a rebuild
	scratch  []udpwire.Room // list rebuild buffer, under mu

	// The encoded room list LIST answers from, rebuilt in place (no
	// allocation) when stale. Owned by the lobby read loop, like sessions.
	list    udpwire.RoomList
	listBuf []byte

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once

	// sink, set by tests before any traffic, receives every datagram
	// instead of the socket: a test then plays sources that are not
	// loopback addresses without sending anything off the machine.
	sink func(b []byte, ep netip.AddrPort)
}

// Listen validates cfg, binds the lobby socket and starts the lobby read
// loop and the janitor (idle players, seat holds, cleanup). Instances are
// bound on demand. Close stops everything.
func Listen(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("udp: invalid config: %w", err)
	}
	host, _ := resolveHost(cfg.Addr)
	_, port, _ := net.SplitHostPort(cfg.Addr)
	laddr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(hostString(host), port))
	if err != nil {
		return nil, fmt.Errorf("udp: lobby address %q: %w", cfg.Addr, err)
	}
	conn, err := pktinfo.Listen("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("udp: lobby: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.SocketBuffer > 0 {
		if err := sockbuf.Set(conn, cfg.SocketBuffer); err != nil {
			log.Warn("udp lobby: socket buffer", "bytes", cfg.SocketBuffer, "err", err)
		}
	}
	s := &Server{
		cfg:      cfg,
		log:      log,
		epoch:    time.Now(),
		conn:     conn,
		addr:     conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		host:     host,
		typeOff:  1,
		adv:      cfg.AdvertiseAddr,
		ldec:     udpwire.Decoder{Profile: cfg.Profile, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelLobby},
		idec:     udpwire.Decoder{Profile: cfg.Profile, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelInstance},
		sessions: newSessionTable(cfg.MaxSessions, int64(cfg.SessionTimeout)),
		rooms:    make(map[uint32]*instance),
		owned:    make(map[netip.Addr]int),
		held:     make(map[netip.Addr]int),
		stop:     make(chan struct{}),
		listBuf:  make([]byte, 0, cfg.MaxInstances*udpwire.RoomEntryLen),
	}
	s.stale.Store(true)
	if !s.adv.IsValid() {
		// Unspecified (0.0.0.0) when the lobby listens everywhere: the TCP
		// lobby replaces it per client by its connection's local address.
		s.adv = host
		if !host.IsValid() || host.IsUnspecified() {
			s.adv = netip.IPv4Unspecified()
		}
	}
	if cfg.Profile == udpwire.ProfileRType17 {
		s.typeOff = 6
	}
	if cfg.BasePort > 0 {
		s.slots = make([]bool, cfg.MaxInstances)
	}
	if cfg.RateLimit > 0 {
		s.limiter, err = ratelimit.New[netip.AddrPort](cfg.RateLimit, cfg.burst(), cfg.MaxRateKeys)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("udp: %w", err)
		}
	}
	if cfg.AmplifyAllowance > 0 {
		s.amp, err = ratelimit.New[netip.Addr](float64(cfg.AmplifyAllowance), cfg.ampBurst(), cfg.MaxRateKeys)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("udp: %w", err)
		}
	}
	s.wg.Add(2)
	go s.lobbyLoop()
	go s.janitor()
	log.Info("udp lobby listening", "addr", s.addr.String(), "base_port", cfg.BasePort,
		"max_instances", cfg.MaxInstances, "header", cfg.Profile.String())
	return s, nil
}

func hostString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// Addr returns the lobby's bound address (with the chosen port when the
// configured one was 0).
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// now is the server's monotonic clock in nanoseconds.
func (s *Server) now() int64 { return int64(time.Since(s.epoch)) }

// Stats returns a snapshot of the counters and gauges.
func (s *Server) Stats() Stats {
	var st Stats
	s.c.snapshot(&st)
	s.mu.Lock()
	st.Rooms = len(s.rooms)
	st.Instances = len(s.rooms)
	for _, in := range s.rooms {
		st.Players += len(in.players)
		st.HeldSeats += len(in.holds)
	}
	st.RoomOwners = len(s.owned)
	st.SeatHolders = len(s.held)
	s.mu.Unlock()
	st.Sessions = int(s.nSessions.Load())
	st.RateKeys = s.limiter.Len()
	st.RateKeysEvicted = s.limiter.Evicted()
	return st
}

// Rooms returns the rooms as the lobby lists them, sorted by id.
func (s *Server) Rooms() []udpwire.Room {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.collectRooms())
}

// Close stops the lobby and every instance (players get SERVER_DISCONNECT
// with reason DisconnectShutdown) and waits for their goroutines. It is
// safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		s.conn.Close()
		s.mu.Lock()
		s.closed = true
		now := s.now()
		for _, in := range s.rooms {
			s.removeLocked(in, now)
		}
		s.mu.Unlock()
		s.wg.Wait()
		s.log.Info("udp lobby stopped", "addr", s.addr.String())
	})
	return nil
}

// Allocate creates a game instance for a room started by the TCP lobby,
// holding n seats for its players, and returns the address they send
// CLIENT_HELLO to. The instance is an ordinary room: listed by the lobby,
// joined through the instance handshake, cleaned up when empty. It
// satisfies the TCP lobby's InstancePool.
func (s *Server) Allocate(n int) (netip.AddrPort, error) {
	if n < 1 || n > 0xFFFF {
		return netip.AddrPort{}, fmt.Errorf("udp: allocate: %d players", n)
	}
	in, reason := s.newInstance(netip.Addr{}, n, s.now())
	if in == nil {
		return netip.AddrPort{}, fmt.Errorf("udp: allocate: no instance (%s)", reason)
	}
	return netip.AddrPortFrom(s.adv, in.port), nil
}

// Release closes an instance Allocate returned if no player has joined it
// yet: the TCP room it was for was cancelled before GAME_START. It
// satisfies protocols/tcplobby/tcpserver's optional Releaser.
func (s *Server) Release(addr netip.AddrPort) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range s.rooms {
		if in.port == addr.Port() && len(in.players) == 0 {
			s.removeLocked(in, s.now())
			return
		}
	}
}

var errClosed = errors.New("udp: server closed")

// newInstance binds a new instance with holds seats reserved and registers
// its room, counted against owner's MaxRoomsPerIP quota (the zero owner,
// Allocate's, is not). On failure it returns nil and the JOIN_FAILED
// reason.
func (s *Server) newInstance(owner netip.Addr, holds int, now int64) (*instance, string) {
	s.mu.Lock()
	if s.closed || len(s.rooms)+s.reserved >= s.cfg.MaxInstances {
		s.mu.Unlock()
		return nil, FailMaxInstances
	}
	if owner.IsValid() && s.cfg.MaxRoomsPerIP > 0 && s.owned[owner] >= s.cfg.MaxRoomsPerIP {
		s.mu.Unlock()
		return nil, FailRoomsPerIP
	}
	s.reserved++
	s.own(owner, 1) // taken before binding: a concurrent CREATE sees it
	s.mu.Unlock()

	conn, slot, err := s.bindInstance()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved--
	if err != nil {
		s.own(owner, -1)
		s.log.Warn("udp instance: bind failed", "err", err)
		return nil, FailBind
	}
	if s.closed {
		s.own(owner, -1)
		conn.Close()
		return nil, FailMaxInstances
	}
	s.nextID++
	if s.nextID == 0 {
		s.nextID = 1
	}
	in := newInstance(s, s.nextID, conn, slot, max(s.cfg.MaxPlayers, holds))
	in.owner = owner
	for range holds {
		in.holds = append(in.holds, hold{expires: now + int64(s.cfg.SeatHold)})
	}
	if holds == 0 {
		// A room created at the lobby waits SeatHold for its creator's
		// JOIN, as a held seat waits for its player: only then does its
		// cleanup interval start (a short interval must not take a room
		// its creator has not had time to join).
		in.idleSince = now + int64(s.cfg.SeatHold)
	}
	s.rooms[in.id] = in
	s.invalidate()
	s.c.created.Add(1)
	s.wg.Add(1)
	go in.readLoop()
	s.log.Debug("udp instance created", "room", in.id, "port", in.port, "held", holds)
	return in, ""
}

// bindInstance binds an instance socket: the lowest free pool port that
// binds, or an OS-chosen port when BasePort is 0. slot is -1 for the latter.
func (s *Server) bindInstance() (*pktinfo.Conn, int, error) {
	ip := net.IP(nil)
	if s.host.IsValid() {
		ip = net.IP(s.host.AsSlice())
	}
	if s.slots == nil {
		c, err := pktinfo.Listen("udp", &net.UDPAddr{IP: ip})
		if err == nil {
			s.tune(c)
		}
		return c, -1, err
	}
	var lastErr error = errClosed
	for i := range s.slots {
		s.mu.Lock()
		free := !s.slots[i]
		if free {
			s.slots[i] = true
		}
		s.mu.Unlock()
		if !free {
			continue
		}
		c, err := pktinfo.Listen("udp", &net.UDPAddr{IP: ip, Port: s.cfg.BasePort + i})
		if err == nil {
			s.tune(c)
			return c, i, nil
		}
		lastErr = err
		s.mu.Lock()
		s.slots[i] = false
		s.mu.Unlock()
	}
	return nil, -1, lastErr
}

// tune applies SocketBuffer to an instance socket: a 4-player room is
// little traffic, but a load test may put hundreds of players behind one
// instance port's receive queue, and a burst of PINGs must not overflow the
// OS default (208 KiB on Linux).
func (s *Server) tune(c *pktinfo.Conn) {
	if s.cfg.SocketBuffer > 0 {
		if err := sockbuf.Set(c, s.cfg.SocketBuffer); err != nil {
			s.log.Warn("udp instance: socket buffer", "bytes", s.cfg.SocketBuffer, "err", err)
		}
	}
}

// invalidate marks the cached room list stale. Called with mu held after
// any change a list shows (rooms, player counts, held seats, states).
func (s *Server) invalidate() { s.stale.Store(true) }

// roomList returns the lobby's room list, rebuilding it in place if stale:
// no allocation, so LIST stays allocation-free even when every other
// request is a JOIN that changes a player count. Only the lobby read loop
// calls it (it owns the list, which it reads without mu).
func (s *Server) roomList() udpwire.RoomList {
	if s.stale.Load() {
		s.mu.Lock()
		// Cleared before reading the rooms: a change made after this
		// point marks the list stale again.
		s.stale.Store(false)
		// listBuf holds MaxInstances entries: it never grows.
		s.list = udpwire.MakeRoomList(s.listBuf[:0], s.collectRooms())
		s.mu.Unlock()
	}
	return s.list
}

// collectRooms returns every room's list entry sorted by id, in a scratch
// slice valid until the next call. Called with mu held.
func (s *Server) collectRooms() []udpwire.Room {
	rooms := s.scratch[:0]
	for _, in := range s.rooms {
		rooms = append(rooms, udpwire.Room{
			ID:         in.id,
			Players:    uint16(len(in.players) + len(in.holds)),
			MaxPlayers: uint16(in.max),
			Port:       in.port,
			State:      in.state,
		})
	}
	slices.SortFunc(rooms, func(a, b udpwire.Room) int { return cmp.Compare(a.ID, b.ID) })
	s.scratch = rooms
	return rooms
}

// janitor expires seat holds, drops idle players and removes instances
// that have been empty or finished for a cleanup interval.
func (s *Server) janitor() {
	defer s.wg.Done()
	period := min(s.cfg.CleanupInterval, s.cfg.IdleTimeout/2, s.cfg.SeatHold/2, time.Second)
	period = max(period, 5*time.Millisecond)
	t := time.NewTicker(period)
	defer t.Stop()
	lastCleanup := s.now()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.now()
		cleanup := now-lastCleanup >= int64(s.cfg.CleanupInterval)
		if cleanup {
			lastCleanup = now
		}
		if !s.tidy(now, cleanup) {
			return
		}
		s.limiter.Sweep(now)
		s.amp.Sweep(now)
	}
}

// tidy is one janitor pass at now: expired seat holds released, idle
// players dropped and, when cleanup is set, rooms empty or finished for a
// whole CleanupInterval removed. It reports false once the server is
// closed.
func (s *Server) tidy(now int64, cleanup bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	for _, in := range s.rooms {
		in.expireHolds(now)
		in.dropIdle(now)
		if cleanup && in.idleSince > 0 && now-in.idleSince >= int64(s.cfg.CleanupInterval) &&
			(in.state == udpwire.Finished || in.empty()) {
			s.removeLocked(in, now)
		}
	}
	return true
}

// removeLocked shuts in down and forgets its room, giving back its
// creator's room quota and its holders' seat quotas at now. Called with mu
// held.
func (s *Server) removeLocked(in *instance, now int64) {
	in.shutdown(DisconnectShutdown, now)
	for _, h := range in.holds {
		s.hold(h.ip, -1)
	}
	in.holds = in.holds[:0]
	s.own(in.owner, -1)
	in.owner = netip.Addr{}
	delete(s.rooms, in.id)
	s.invalidate()
}

// own and hold move an IP's count of live rooms created and of seats held
// by delta; the zero address (Allocate's rooms and seats) is not counted,
// and an IP at zero leaves the table, so each table is bounded by the
// rooms or seats that exist. Called with mu held.
func (s *Server) own(ip netip.Addr, delta int)  { count(s.owned, ip, delta) }
func (s *Server) hold(ip netip.Addr, delta int) { count(s.held, ip, delta) }

func count(m map[netip.Addr]int, ip netip.Addr, delta int) {
	if !ip.IsValid() {
		return
	}
	if n := m[ip] + delta; n > 0 {
		m[ip] = n
	} else {
		delete(m, ip)
	}
}

// send writes b to ep on c from the local address ep wrote to (zero: the
// kernel's choice), counting the reply by its message type.
func (s *Server) send(c *pktinfo.Conn, b []byte, ep netip.AddrPort, local netip.Addr) {
	if s.sink != nil {
		s.sink(b, ep)
	} else if _, err := c.WriteTo(b, ep, local); err != nil {
		s.c.sendErrs.Add(1)
		return
	}
	s.c.replies[b[s.typeOff]].Add(1)
}

// reach credits ip with AmplificationFactor times the in bytes just
// received from it, then reports whether out bytes may be sent to it now,
// taking them from its budget (Config.AmplifyAllowance); a refusal is
// counted in Drops[DropAmplification]. The lobby and every instance spend
// from one budget per IP, so what a source gets back is bounded by what it
// sent whatever port it sent it to; server-initiated instance messages
// (countdown, GAME_START, disconnects) spend with no credit. Loopback
// sources are exempt: no other machine can send from one.
func (s *Server) reach(ip netip.Addr, now int64, in, out int) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || s.amp.Spend(ip, now, AmplificationFactor*float64(in), float64(out)) {
		return true
	}
	s.c.drops[dropAmplification].Add(1)
	return false
}
