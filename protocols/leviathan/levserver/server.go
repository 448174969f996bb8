package levserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/internal/pktinfo"
	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/refserver/ratelimit"
)

// FirstPlayerID is the id of the first player allowed to join (the
// engine's "Allowed, ID: 1001").
const FirstPlayerID = 1001

type handshake uint8

const (
	hsNew handshake = iota
	hsConnected
	hsSecured
	hsAuthenticated
)

type peer struct {
	addr    netip.AddrPort
	local   netip.Addr // the server address addr last wrote to: the source of what it is sent
	c       *levconn.Conn
	created time.Time
	state   handshake
	player  int // 0: not joined
	inGame  bool
	warned  bool   // ack-reading mismatch counted
	maxID   uint32 // highest PKT_ID received
	// bytesIn and bytesOut count the datagram bytes received from and
	// sent to addr until it is verified (it acked one of our packets):
	// until then sends are bounded by AmplificationFactor (mayAnswer).
	bytesIn, bytesOut uint64
	verified          bool
	// muted: a new client may have taken addr (restartTooSoon): nothing
	// is sent to it, lest the client take our stale messages for its
	// own connection's, until addr sends an Ln packet of this connection.
	muted bool
}

// AmplificationFactor bounds what the endpoint sends to an address that
// has not proven it receives what is sent there: at most this many times
// the bytes received from it (RFC 9000 §8.1's limit). With a spoofed source
// address the endpoint would otherwise answer each 22-byte Connect with
// five transmissions of Response Connect to the victim. An address is
// proven once a packet from it acks one of the endpoint's PKT_IDs, which
// only a receiver of that packet knows to ack (but see
// docs/limitations.md: the ids are predictable). Datagrams beyond the
// bound are not sent (Stats.Drops["amplification"]); the connection engine
// takes them for lost, so a Critical message is resent later, against the
// same bound.
const AmplificationFactor = 3

// Server is the reference Leviathan endpoint. Create it with Start, stop it
// with Close. All methods are safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	conn    *pktinfo.Conn
	addr    netip.AddrPort
	epoch   time.Time
	limiter *ratelimit.Limiter[netip.Addr]

	// mu guards everything below: connections, players, counters. The read
	// loop and the ticker take it per datagram / per sweep.
	mu         sync.Mutex
	peers      map[netip.AddrPort]*peer
	peersByIP  map[netip.Addr]int           // live connections by source IP
	lingering  map[netip.AddrPort]time.Time // closed by the peer: Ln packets still acked until then
	lingerQ    []lingerEntry                // the same, oldest first
	players    int
	nextPlayer int
	accepting  bool
	st         counters
	pkt        levwire.Packet
	scratch    []byte
	msgBuf     []byte
	closed     bool

	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// Start validates cfg, binds the UDP socket and starts the read loop and
// the timer sweep. Addr is valid when it returns; Close stops everything.
func Start(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	laddr, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("leviathan: address %q: %w", cfg.Addr, err)
	}
	conn, err := pktinfo.Listen("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("leviathan: %w", err)
	}
	if cfg.SocketBuffer > 0 {
		if err := sockbuf.Set(conn, cfg.SocketBuffer); err != nil {
			cfg.Logger.Warn("leviathan: socket buffer", "bytes", cfg.SocketBuffer, "err", err)
		}
	}
	s := &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		conn:       conn,
		addr:       conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		epoch:      time.Now(),
		peers:      make(map[netip.AddrPort]*peer),
		peersByIP:  make(map[netip.Addr]int),
		lingering:  make(map[netip.AddrPort]time.Time),
		nextPlayer: FirstPlayerID,
		accepting:  !cfg.NotAccepting,
		st:         counters{drops: map[string]uint64{}},
		scratch:    make([]byte, 0, 512),
		msgBuf:     make([]byte, 0, 64),
		done:       make(chan struct{}),
	}
	if cfg.RateLimit > 0 {
		s.limiter, err = ratelimit.New[netip.Addr](cfg.RateLimit, cfg.burst(), cfg.MaxRateKeys)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("leviathan: %w", err)
		}
	}
	s.wg.Add(2)
	go s.readLoop()
	go s.tickLoop()
	s.log.Info("leviathan endpoint listening", "addr", s.addr.String(), "max_players", cfg.MaxPlayers,
		"ack_reading", cfg.Conn.AckReading.String())
	return s, nil
}

// Addr returns the bound address (with the chosen port when the configured
// one was 0).
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Config returns the configuration in use, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// SetAccepting switches whether JoinServer may succeed (false: reason
// ServerNotAcceptingPlayers).
func (s *Server) SetAccepting(on bool) {
	s.mu.Lock()
	s.accepting = on
	s.mu.Unlock()
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st.snapshot()
	st.ConnsActive = len(s.peers)
	st.ConnIPs = len(s.peersByIP)
	st.PlayersActive = s.players
	return st
}

// Close sends every connection a CloseConnection response (best effort),
// closes the socket and waits for the goroutines. It is safe to call more
// than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		now := time.Now()
		for _, p := range s.peers {
			if _, e := p.c.SendResponse(now, levconn.None, levwire.ResCloseConnection, 0, nil); e == nil {
				s.flush(now, p)
			}
			s.dropPeer(p, closeShutdown)
		}
		s.mu.Unlock()
		close(s.done)
		err = s.conn.Close()
		s.wg.Wait()
		s.log.Info("leviathan endpoint closed", "addr", s.addr.String())
	})
	return err
}

func (s *Server) readLoop() {
	defer s.wg.Done()
	buf := make([]byte, levwire.MaxDatagram+1)
	for {
		n, from, local, err := s.conn.ReadFrom(buf)
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // e.g. ICMP port unreachable surfaced as ECONNREFUSED
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		now := time.Now()
		if !s.limiter.Allow(from.Addr(), int64(now.Sub(s.epoch))) {
			s.mu.Lock()
			s.st.datagramsIn++
			s.st.drop("rate-limited")
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		if !s.closed {
			s.handle(now, from, local, buf[:n])
		}
		s.mu.Unlock()
	}
}

func (s *Server) tickLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.TickInterval)
	defer t.Stop()
	lastSweep := time.Now()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			// The time of handling, not of the tick: a tick delivered late
			// (the lock was held) must not age the peers less than it should.
			now := time.Now()
			s.mu.Lock()
			for _, p := range s.peers {
				if p.state < hsAuthenticated && s.cfg.HandshakeTimeout > 0 && now.Sub(p.created) >= s.cfg.HandshakeTimeout {
					s.dropPeer(p, closeHandshake)
					continue
				}
				p.c.Tick(now)
				s.events(now, p)
				if !p.c.Closed() {
					s.flush(now, p)
				}
			}
			if now.Sub(lastSweep) > time.Second {
				lastSweep = now
				s.expireLinger(now)
				s.limiter.Sweep(int64(now.Sub(s.epoch)))
			}
			s.mu.Unlock()
		}
	}
}

// restartQuiet is how long a connection must have been silent before a
// new connection's first packet from its address replaces it: copies of
// one datagram (network duplicates) arrive much closer together.
const restartQuiet = 100 * time.Millisecond

// restartKind is what a packet from the address of a live connection says
// about that connection (restartOf).
type restartKind uint8

const (
	restartNone    restartKind = iota // the connection's own packet
	restartNew                        // a new client: replace the connection
	restartTooSoon                    // a new client or a late copy of the connection's first packets: undecided
)

// restartOf tells whether b is one of the first packets of a new
// connection (PKT_ID within the first CriticalTransmissions ids, carrying
// Connect request #1: the engine's first message and its resends) from
// the address of p, which has already received later packets. It is a new
// client when p has been quiet for restartQuiet; before that the packet
// may as well be a late copy of p's own first packets, and is undecided.
func (s *Server) restartOf(now time.Time, p *peer, b []byte) restartKind {
	first := s.cfg.Conn.FirstPacketID
	if len(b) < 10 || levwire.PacketType(binary.BigEndian.Uint16(b)) != levwire.TypeNormal {
		return restartNone
	}
	id := binary.BigEndian.Uint32(b[2:])
	if id < first || id-first >= uint32(s.cfg.Conn.CriticalTransmissions) || p.maxID <= id {
		return restartNone
	}
	if levwire.Decode(&s.pkt, b, levwire.Lenient) != nil {
		return restartNone
	}
	for i := range s.pkt.Messages {
		if m := &s.pkt.Messages[i]; m.Kind == levwire.KindRequest && m.RequestType() == levwire.ReqConnect && m.Number == 1 {
			if now.Sub(p.c.LastReceived()) < restartQuiet {
				return restartTooSoon
			}
			return restartNew
		}
	}
	return restartNone
}

func ruleOf(err error) string {
	var le *levwire.Error
	if errors.As(err, &le) {
		return string(le.Rule)
	}
	return "malformed"
}

// hasConnect reports whether a decoded packet carries a Connect request.
func hasConnect(p *levwire.Packet) bool {
	for i := range p.Messages {
		if m := &p.Messages[i]; m.Kind == levwire.KindRequest && m.RequestType() == levwire.ReqConnect {
			return true
		}
	}
	return false
}

// handle processes one datagram, sent by from to the server address local
// (zero when the socket is not bound to a wildcard), under s.mu.
func (s *Server) handle(now time.Time, from netip.AddrPort, local netip.Addr, b []byte) {
	s.st.datagramsIn++
	p := s.peers[from]
	if p != nil {
		switch s.restartOf(now, p, b) {
		case restartNew:
			// The address now belongs to a new client (a port reused after
			// a close we never saw): its Connect would be a duplicate
			// MessageNumber for the old connection and never answered.
			s.dropPeer(p, closeRestarted)
			p = nil
		case restartTooSoon:
			// Neither acted on nor acked, and the quiet time not reset: a
			// late copy needs neither (its original was), and a new
			// client's engine, its Connect unacked, resends it, which
			// then comes after the quiet time and replaces the
			// connection. Acked, the Connect would count as delivered
			// and never be resent: the client would wait for its answer
			// until it gave up. Until then the old connection is muted:
			// its resends would reach the new client, whose engine would
			// remember their MessageNumbers and take the new
			// connection's messages with those numbers for duplicates.
			s.st.drop("restart-too-soon")
			p.muted = true
			return
		}
	}
	if p == nil {
		if err := levwire.Decode(&s.pkt, b, levwire.Lenient); err != nil {
			s.st.drop(ruleOf(err))
			return
		}
		if s.pkt.Type == levwire.TypeNormal && !hasConnect(&s.pkt) {
			if until, ok := s.lingering[from]; ok && now.Before(until) {
				// A resend from a peer that closed: ack it statelessly so
				// its CloseConnection completes. The ack (7 bytes) is
				// smaller than the Ln packet it answers (at least 11):
				// no amplification.
				s.scratch, _ = levwire.AppendAckOnly(s.scratch[:0], []uint32{s.pkt.ID})
				if _, err := s.conn.WriteTo(s.scratch, from, local); err == nil {
					s.st.datagramsOut++
				}
				s.st.drop("after-close")
				return
			}
		}
		if s.pkt.Type != levwire.TypeNormal || !hasConnect(&s.pkt) {
			s.st.drop("no-connect")
			return
		}
		if len(s.peers) >= s.cfg.MaxConns {
			s.st.drop("conn-cap")
			return
		}
		ip := from.Addr().Unmap()
		if s.cfg.MaxConnsPerIP > 0 && s.peersByIP[ip] >= s.cfg.MaxConnsPerIP {
			s.st.drop("conns-per-ip")
			return
		}
		c, err := levconn.New(s.cfg.Conn, now)
		if err != nil { // validated in Start
			s.st.drop("internal")
			return
		}
		p = &peer{addr: from, c: c, created: now}
		s.peers[from] = p
		s.peersByIP[ip]++
		s.st.connsOpened++
		s.log.Debug("leviathan conn open", "remote", from.String())
	}
	if local.IsValid() {
		p.local = local
	}
	p.bytesIn += uint64(len(b))
	if len(b) >= 6 && levwire.PacketType(binary.BigEndian.Uint16(b)) == levwire.TypeNormal {
		p.maxID = max(p.maxID, binary.BigEndian.Uint32(b[2:]))
		p.muted = false
	}
	if err := p.c.Receive(now, b); err != nil {
		s.st.drop(ruleOf(err)) // the decodable prefix was still acted on
	}
	if !p.verified && p.c.LastAcked() != 0 {
		p.verified = true
		s.st.verified++
	}
	s.events(now, p)
	if !p.c.Closed() {
		s.flush(now, p)
	}
}

func (s *Server) events(now time.Time, p *peer) {
	for _, e := range p.c.Events() {
		switch e.Kind {
		case levconn.EventMessage:
			s.message(now, p, &e.Msg)
		case levconn.EventDuplicate:
			s.st.duplicates++
		case levconn.EventResent:
			s.st.resends++
		case levconn.EventConfirmed:
			s.st.confirmed++
		case levconn.EventLost:
			s.st.lost++
		case levconn.EventAckReading:
			if !p.warned {
				p.warned = true
				s.st.ackReadingMismatch++
				s.log.Warn("leviathan: peer acks fit the other ack-bit reading", "remote", p.addr.String(), "detail", e.Detail)
			}
		case levconn.EventClosed:
			r := closeIdle
			if e.Reason == levconn.CloseCriticalLost {
				r = closeCritical
			}
			s.dropPeer(p, r)
			return
		}
	}
}

func (s *Server) flush(now time.Time, p *peer) {
	for dg := p.c.Poll(now); dg != nil; dg = p.c.Poll(now) {
		if p.muted {
			s.st.drop("muted")
			continue
		}
		if !p.mayAnswer(len(dg)) {
			s.st.drop("amplification")
			continue
		}
		if _, err := s.conn.WriteTo(dg, p.addr, p.local); err != nil {
			s.st.writeErrors++
			continue
		}
		p.bytesOut += uint64(len(dg))
		s.st.datagramsOut++
	}
}

// mayAnswer reports whether n more bytes may go to p: always once p is
// verified, before that while the bytes sent stay within
// AmplificationFactor times the bytes received.
func (p *peer) mayAnswer(n int) bool {
	return p.verified || p.bytesOut+uint64(n) <= AmplificationFactor*p.bytesIn
}

// lingerFor is how long a peer that sent CloseConnection still gets its
// Ln packets acked; maxLinger bounds that table.
const (
	lingerFor = 10 * time.Second
	maxLinger = 4096
)

func (s *Server) linger(now time.Time, a netip.AddrPort) {
	s.expireLinger(now)
	if len(s.lingerQ) >= maxLinger { // evict the oldest
		old := s.lingerQ[0]
		s.lingerQ = s.lingerQ[1:]
		if s.lingering[old.addr] == old.until {
			delete(s.lingering, old.addr)
		}
	}
	until := now.Add(lingerFor)
	s.lingering[a] = until
	s.lingerQ = append(s.lingerQ, lingerEntry{a, until})
}

// expireLinger forgets lingering peers whose time is up (oldest first).
func (s *Server) expireLinger(now time.Time) {
	n := 0
	for n < len(s.lingerQ) && !now.Before(s.lingerQ[n].until) {
		e := s.lingerQ[n]
		if s.lingering[e.addr] == e.until {
			delete(s.lingering, e.addr)
		}
		n++
	}
	if n > 0 {
		s.lingerQ = append(s.lingerQ[:0], s.lingerQ[n:]...)
	}
}

type lingerEntry struct {
	addr  netip.AddrPort
	until time.Time
}

func (s *Server) dropPeer(p *peer, why closeReason) {
	if p.player != 0 {
		s.players--
		p.player = 0
	}
	p.c.Close()
	if s.peers[p.addr] == p {
		delete(s.peers, p.addr)
		ip := p.addr.Addr().Unmap()
		if s.peersByIP[ip]--; s.peersByIP[ip] <= 0 {
			delete(s.peersByIP, ip)
		}
	}
	s.st.closes[why]++
	s.log.Debug("leviathan conn closed", "remote", p.addr.String(), "reason", closeNames[why])
}

// respond queues a response; payload is appended by the caller into
// s.scratch.
func (s *Server) respond(now time.Time, p *peer, rel levconn.Reliability, t levwire.ResponseType, to uint32, payload []byte) {
	if _, err := p.c.SendResponse(now, rel, t, to, payload); err != nil {
		s.st.drop("send-failed")
		return
	}
	s.st.responses[int(t)%len(s.st.responses)]++
}

func (s *Server) countRequest(t levwire.RequestType) {
	i := int(t)
	if i >= len(s.st.requests)-1 {
		i = len(s.st.requests) - 1
	}
	s.st.requests[i]++
}

// message acts on one new (non-duplicate) message from p.
func (s *Server) message(now time.Time, p *peer, m *levwire.Message) {
	if m.Kind == levwire.KindResponse {
		if m.ResponseType() == levwire.ResCloseConnection {
			// Ack it now (the client may wait for that ack) and keep
			// acking its resends for a while after the close.
			p.c.FlushAcks()
			s.flush(now, p)
			s.linger(now, p.addr)
			s.dropPeer(p, closeByPeer)
		}
		return // Keepalive, None, Connect replies …: nothing to do
	}
	if m.Kind != levwire.KindRequest {
		return
	}
	t := m.RequestType()
	if s.handshake(now, p, m, t) {
		return
	}
	if p.state < hsAuthenticated {
		s.st.drop("pre-auth")
		return
	}
	switch t {
	case levwire.ReqJoinServer:
		s.joinServer(now, p, m)
	case levwire.ReqJoinGame:
		s.joinGame(now, p, m)
	case levwire.ReqEcho:
		s.countRequest(t)
		// The engine sends this untracked; we make it Critical so that
		// echo measurements survive loss (ResponseTo stays 0, so only
		// the client's ack confirms it).
		s.respond(now, p, levconn.Critical, levwire.ResNone, 0, nil)
	case levwire.ReqServerstatus:
		s.serverStatus(now, p, m)
	default:
		// Identification, remote console, sync values, …: the engine's
		// endpoint does not answer these either.
		s.countRequest(t)
		s.st.drop("unsupported")
	}
}

// handshake acts on a handshake request t (Connect, Security,
// Authenticate) and reports true, or reports false for any other.
func (s *Server) handshake(now time.Time, p *peer, m *levwire.Message, t levwire.RequestType) bool {
	b := s.scratch[:0]
	switch t {
	case levwire.ReqConnect:
		var pl levwire.Connect
		if pl.Decode(m.Payload) != nil {
			s.st.drop("payload")
			return true
		}
		if pl.CheckValue != levwire.CheckValue {
			s.st.drop("check-value")
			return true
		}
		s.countRequest(t)
		p.state = max(p.state, hsConnected)
		s.respond(now, p, levconn.Critical, levwire.ResConnect, m.Number, levwire.Connect{CheckValue: levwire.CheckValue}.Append(b))
		return true
	case levwire.ReqSecurity:
		var pl levwire.SecurityRequest
		if pl.Decode(m.Payload) != nil {
			s.st.drop("payload")
			return true
		}
		if p.state < hsConnected {
			s.st.drop("out-of-order")
			return true
		}
		s.countRequest(t)
		p.state = max(p.state, hsSecured)
		s.respond(now, p, levconn.Critical, levwire.ResSecurity, m.Number, levwire.SecurityResponse{SecureType: levwire.SecureTypeNone}.Append(b))
		return true
	case levwire.ReqAuthenticate:
		var pl levwire.AuthenticateRequest
		if pl.Decode(m.Payload) != nil {
			s.st.drop("payload")
			return true
		}
		if p.state < hsSecured {
			s.st.drop("out-of-order")
			return true
		}
		s.countRequest(t)
		p.state = hsAuthenticated
		// The engine accepts any credentials and answers UserID 0, token 0.
		s.respond(now, p, levconn.Critical, levwire.ResAuthenticate, m.Number, levwire.AuthenticateResponse{}.Append(b))
		return true
	}
	return false
}

// joinServer answers JoinServer: ServerAllow with the player's id, or
// ServerDisallow with the first failing check.
func (s *Server) joinServer(now time.Time, p *peer, m *levwire.Message) {
	b := s.scratch[:0]
	var pl levwire.JoinServer
	if pl.Decode(m.Payload) != nil {
		s.st.drop("payload")
		return
	}
	s.countRequest(levwire.ReqJoinServer)
	if r, refused := s.joinRefusal(p); refused {
		s.st.disallowed[r]++
		s.respond(now, p, levconn.Critical, levwire.ResServerDisallow, m.Number,
			levwire.ServerDisallow{Message: []byte(disallowText[r]), Reason: r}.Append(b))
		return
	}
	p.player = s.nextPlayer
	s.nextPlayer++
	s.players++
	s.st.playersJoined++
	msg := strconv.AppendInt(append(s.msgBuf[:0], "Allowed, ID: "...), int64(p.player), 10)
	s.respond(now, p, levconn.Critical, levwire.ResServerAllow, m.Number,
		levwire.ServerAllow{Accepted: levwire.AcceptConnectAccepted, Message: msg}.Append(b))
}

// joinGame answers JoinGame of a joined player: ServerAllow, then
// StartWorldReceive.
func (s *Server) joinGame(now time.Time, p *peer, m *levwire.Message) {
	b := s.scratch[:0]
	var pl levwire.JoinGame
	if pl.Decode(m.Payload) != nil {
		s.st.drop("payload")
		return
	}
	s.countRequest(levwire.ReqJoinGame)
	if p.player == 0 {
		r := levwire.DisallowNotAuthorized
		s.st.disallowed[r]++
		s.respond(now, p, levconn.Critical, levwire.ResServerDisallow, m.Number,
			levwire.ServerDisallow{Message: []byte("join the server first"), Reason: r}.Append(b))
		return
	}
	p.inGame = true
	s.respond(now, p, levconn.Critical, levwire.ResServerAllow, m.Number,
		levwire.ServerAllow{Accepted: levwire.AcceptDone, Message: []byte("Joined game")}.Append(b))
	s.respond(now, p, levconn.Critical, levwire.ResStartWorldReceive, 0,
		levwire.StartWorldReceive{WorldID: 1, WorldType: 0}.Append(s.scratch[:0]))
}

// serverStatus answers Serverstatus.
func (s *Server) serverStatus(now time.Time, p *peer, m *levwire.Message) {
	b := s.scratch[:0]
	s.countRequest(levwire.ReqServerstatus)
	st := levwire.ServerStatus{
		Name:       []byte(s.cfg.Name),
		Joinable:   s.accepting && s.players < s.cfg.MaxPlayers,
		Status:     levwire.StatusRunning,
		Players:    int32(s.players),
		MaxPlayers: int32(s.cfg.MaxPlayers),
	}
	s.respond(now, p, levconn.Critical, levwire.ResServerStatus, m.Number, st.Append(b))
}

var disallowText = [...]string{
	levwire.DisallowUnauthenticated:             "not authenticated",
	levwire.DisallowServerFull:                  "server full",
	levwire.DisallowServerNotAcceptingPlayers:   "server not accepting players",
	levwire.DisallowServerAlreadyConnectedToYou: "already joined",
	levwire.DisallowServerCustom:                "",
}

// joinRefusal returns the first failing JoinServer check, in the engine's
// order: not accepting, already joined, full, unauthenticated.
func (s *Server) joinRefusal(p *peer) (levwire.DisallowReason, bool) {
	switch {
	case !s.accepting:
		return levwire.DisallowServerNotAcceptingPlayers, true
	case p.player != 0:
		return levwire.DisallowServerAlreadyConnectedToYou, true
	case s.players >= s.cfg.MaxPlayers:
		return levwire.DisallowServerFull, true
	case p.state < hsAuthenticated:
		return levwire.DisallowUnauthenticated, true
	}
	return 0, false
}
