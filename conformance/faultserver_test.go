package conformance

import (
	"cmp"
	"encoding/binary"
	"hash/crc32"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/sockbuf"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// faults switches one defect each into the test lobby, so the tests can
// check that the case meant for a defect catches it and no other case does.
type faults struct {
	noCRCCheck        bool // process requests whatever their CRC
	crcLittleEndian   bool // write reply CRCs little-endian
	noSeqEcho         bool // replies carry sequence+1 (lobby and instance)
	replyMalformed    bool // answer JOIN_FAILED to any malformed datagram
	wrongRoomCount    bool // roomCount field one more than the entries
	lobbySystemList   bool // ROOM_LIST in the Lobby System layout (udp-lobby.md §5)
	listOmitsNewest   bool // ROOM_LIST leaves out the room created last
	joinFullAllowed   bool // the lobby JOIN skips the full-room check
	crashOnTruncated  bool // stop answering after a datagram shorter than its header says
	dupCreateTwoRooms bool // no session replay: a retried CREATE makes a room
	dupReplies        bool // every lobby reply goes out twice
	junkFirst         bool // every lobby reply follows a 6-byte datagram that is no message
	// One defect each, for the case that owns the reply or behaviour:
	failedPacketType bool // LOBBY_JOIN_FAILED carries packetType 0x01 (client to server)
	failedOrigSize   bool // LOBBY_JOIN_FAILED carries originalSize 1 (payloadSize 0)
	listAnsweredFail bool // LOBBY_LIST_ROOMS is answered with LOBBY_JOIN_FAILED
	createSilent     bool // LOBBY_CREATE_ROOM is never answered
	createdLong      bool // LOBBY_ROOM_CREATED has a 7-byte payload (a zero byte more)
	joinPortOff      bool // LOBBY_JOIN_SUCCESS gives a port one above the room's
	joinRefused      bool // every LOBBY_JOIN_ROOM is answered with LOBBY_JOIN_FAILED
	joinOtherID      bool // LOBBY_JOIN_SUCCESS names another roomId
	missingSilent    bool // LOBBY_JOIN_ROOM of a missing room (roomId ≠ 0) is dropped
	joinPlayingOK    bool // the lobby JOIN skips the Playing check
	poolFullSilent   bool // LOBBY_CREATE_ROOM past the instance limit is dropped
	helloOnce        bool // an instance answers only the first CLIENT_HELLO of each endpoint
	startMissesOne   bool // SERVER_GAME_START goes to every player but one
	listCountLow     bool // the list gives a full room's playerCount as maxPlayers-1
	listNeverPlaying bool // the list gives a Playing room as Countdown
	listBogusEntry   bool // the list ends with an entry of roomId 0, port 0
	// portsElsewhere: the instances listen outside the range the suite is
	// given (portRange is the same size, just above): the range the
	// operator declared is not the one the server uses.
	portsElsewhere bool
	// Quirks of real servers (the "quirky lobby", see quirks_test.go):
	instOtherPort  bool // instances answer through a second socket (another source port)
	denyJoin       bool // instances answer every CLIENT_JOIN_REQUEST with SERVER_JOIN_DENY
	denyAtHello    bool // a full or playing instance answers a newcomer's CLIENT_HELLO with SERVER_JOIN_DENY
	emptyPong      bool // SERVER_PONG carries payloadSize 0: no clientTime echoed
	lobbyOtherPort bool // the lobby answers through a second socket
	silentRoomZero bool // LOBBY_JOIN_ROOM of roomId 0 is dropped, not answered
	noAddrQuota    bool // no per-address room quota: one address can take every instance
	// cleanAtHello: a room whose instance first hears from a member who
	// joined it through the lobby (not its creator: the lobby cases' room,
	// which the instance cases share) is cleaned up lazily just as that
	// CLIENT_HELLO comes, nobody having joined its instance: that HELLO,
	// and every later datagram to its port, goes unanswered (the port is
	// not given to another room). Once a run.
	cleanAtHello bool
	// freeOnFull: the first time a create finds the pool full, a lazy
	// cleanup frees this many rooms (the oldest empty ones) right after
	// the refusal, before the next request.
	freeOnFull   int
	roomsOutlive bool // an instance exits when its last player leaves, its room stays listed
	ghosts       int  // until the first CREATE_ROOM, ROOM_LIST also names this many rooms already gone (no instance, no port held)
	// die, "abort" or "hang", kills the lobby when it receives a valid
	// request of type dieOn: abort closes its socket for good (datagrams
	// then draw ICMP port unreachable: refused), hang stops answering
	// anything (silent).
	die   string
	dieOn udpwire.MsgType
	// onDie, when set, is called as the lobby dies, before its socket
	// closes (the re-executed test binary aborts itself there, as a real
	// server's failed assertion would).
	onDie func()
	// listen is the lobby's address; "" picks a free loopback port.
	listen string
	// cleanup, when > 0, frees a room empty and idle that long (lazily);
	// 0 never frees one.
	cleanup time.Duration
	// rateLimit, when > 0, allows that many lobby requests per second per
	// source IP (burst rateBurst) and drops the rest.
	rateLimit float64
	rateBurst float64
	// perSource, when > 0, is a per-address limit by count: of every
	// perSourceWindow lobby datagrams from one source address, the first
	// perSource are handled and the rest dropped.
	perSource, perSourceWindow int
	// overload, when > 0, overloads the lobby while a flood arrives: it
	// handles only the datagrams whose sequence number is a multiple of
	// overload, whatever their source (a stand-in for a full receive queue,
	// chosen by count, not time, so that a loaded machine cannot change
	// which). A flood starts when one address has sent floodRun lobby
	// datagrams in a row, and lasts while each datagram follows one of
	// that address's.
	overload uint16
	// floodPause, when > 0, stops the lobby reading for that long when
	// the first flood starts (floodRun datagrams in a row from one
	// address), then it answers all it holds: a lobby without a limit on
	// a machine that gives it no CPU for a while, whose answers all come
	// late.
	floodPause time.Duration
}

// floodRun is how many lobby datagrams in a row from one address make a
// flood (faults.overload). The suite's own requests, spread over its pool of
// addresses, never come near it.
const floodRun = 50

// testLobby is a small, correct (unless faults say otherwise) UDP lobby with
// game instances, spec header only, for the conformance package's tests.
type testLobby struct {
	f          faults
	conn       *net.UDPConn
	out        *net.UDPConn // where replies go out from (conn unless lobbyOtherPort)
	maxRooms   int
	maxPlayers int
	tick       time.Duration
	// ports are the pre-bound instance sockets, consecutive ports from
	// portLo; a room takes a free one (freed by faults.cleanup only).
	ports  []*net.UDPConn
	portLo uint16
	alts   []*net.UDPConn // second sockets of instOtherPort
	// perAddr is the per-source-IP room quota (0: none).
	perAddr int
	// freedOnFull: freeAfterFull has freed its rooms; cleanedAtHello:
	// cleanAtHello's cleanup has run.
	freedOnFull, cleanedAtHello bool

	mu       sync.Mutex
	dead     bool
	nextID   uint32
	rooms    map[uint32]*testRoom
	byPort   []*testRoom // the room on each port (nil: free)
	sessions map[netip.AddrPort]session
	buckets  map[netip.Addr]*bucket
	// counts are the lobby datagrams from each address (faults.perSource).
	counts map[netip.Addr]int
	// last, run and flooder track floods (faults.overload): the address
	// of the previous lobby datagram, how many in a row came from it, and
	// the flooding address (invalid when no flood is arriving).
	last, flooder netip.Addr
	run           int
	// paused: the lobby took its faults.floodPause; pauseNow: it is due.
	paused, pauseNow bool
	wg               sync.WaitGroup
}

type session struct {
	seq   uint16
	typ   udpwire.MsgType
	reply []byte
}

type testRoom struct {
	id      uint32
	port    uint16
	conn    *net.UDPConn
	out     *net.UDPConn   // where replies go out from (conn unless instOtherPort)
	idx     int            // index of its port
	owner   netip.Addr     // the address that created it
	creator netip.AddrPort // the endpoint that created it
	spoken  bool           // its instance has received a datagram
	gone    bool           // its instance exited (roomsOutlive): datagrams are dropped
	active  time.Time      // last activity (creation, lobby JOIN, instance datagram)
	state   udpwire.RoomState
	players map[netip.AddrPort]bool // endpoint → ready
	hellos  map[netip.AddrPort]bool // endpoints that sent CLIENT_HELLO (faults.helloOnce)
}

func startTestLobby(t *testing.T, f faults, maxRooms int) *testLobby {
	t.Helper()
	la := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	if f.listen != "" {
		var err error
		if la, err = net.ResolveUDPAddr("udp", f.listen); err != nil {
			t.Fatal(err)
		}
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		t.Fatal(err)
	}
	sockbuf.SetRead(c, 4<<20) // a flood held by faults.floodPause must not overflow it
	l := &testLobby{f: f, conn: c, maxRooms: maxRooms, maxPlayers: 4, tick: 30 * time.Millisecond,
		rooms: map[uint32]*testRoom{}, sessions: map[netip.AddrPort]session{}, buckets: map[netip.Addr]*bucket{},
		counts: map[netip.Addr]int{}}
	l.out = c
	if f.lobbyOtherPort {
		l.out = listenLoopback(t)
	}
	l.bindPorts(t)
	l.byPort = make([]*testRoom, maxRooms)
	if !f.noAddrQuota {
		l.perAddr = 3
	}
	l.wg.Add(1 + len(l.ports))
	go l.serve()
	for i := range l.ports {
		go l.servePort(i)
	}
	if f.cleanup > 0 {
		done := make(chan struct{})
		t.Cleanup(func() { close(done) })
		go l.janitor(done)
	}
	t.Cleanup(l.close)
	return l
}

// listenLoopback binds a UDP socket on a free loopback port, closed at the
// end of the test.
func listenLoopback(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// bindPorts binds maxRooms consecutive loopback ports for the instances, so
// the suite can be given the range (--instance-ports). They are picked
// with the maxRooms after them (portRange's ports "elsewhere") from this
// process's quiet ports (quietport): held here, but picked by no other
// test, of this process or another, which once found a port of its own
// pick bound by a lobby of these tests probing for a free range.
func (l *testLobby) bindPorts(t *testing.T) {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := quietport.Pick(t, "udp", 2*l.maxRooms)
		var got []*net.UDPConn
		for i := 0; i < l.maxRooms; i++ {
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: base + i})
			if err != nil {
				break
			}
			got = append(got, c)
		}
		if len(got) == l.maxRooms {
			l.ports, l.portLo = got, uint16(base)
			return
		}
		for _, c := range got {
			c.Close()
		}
	}
	t.Fatal("no free range of instance ports")
}

func (l *testLobby) portRange() PortRange {
	if l.f.portsElsewhere {
		lo := l.portLo + uint16(l.maxRooms)
		return PortRange{First: lo, Last: lo + uint16(l.maxRooms) - 1}
	}
	return PortRange{First: l.portLo, Last: l.portLo + uint16(l.maxRooms) - 1}
}

func (l *testLobby) addr() netip.AddrPort {
	return l.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

func (l *testLobby) close() {
	l.conn.Close()
	l.mu.Lock()
	for _, c := range append(l.ports, l.alts...) {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// reply finishes a datagram: header seq (echoed unless the fault says
// otherwise) and the CRC trailer.
func (l *testLobby) seal(b []byte) []byte {
	if l.f.noSeqEcho {
		binary.BigEndian.PutUint16(b[2:], binary.BigEndian.Uint16(b[2:])+1)
	}
	end := len(b) - 4
	c := crc32.ChecksumIEEE(b[:end])
	if l.f.crcLittleEndian {
		binary.LittleEndian.PutUint32(b[end:], c)
	} else {
		binary.BigEndian.PutUint32(b[end:], c)
	}
	return b
}

func (l *testLobby) serve() {
	defer l.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := l.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if out := l.handle(buf[:n], from); out != nil {
			if l.f.junkFirst {
				l.out.WriteToUDPAddrPort([]byte{0x00, 'j', 'u', 'n', 'k', 0xff}, from)
			}
			l.out.WriteToUDPAddrPort(out, from)
			if l.f.dupReplies {
				l.out.WriteToUDPAddrPort(out, from)
			}
		}
		l.mu.Lock()
		pause := l.pauseNow
		l.pauseNow = false
		l.mu.Unlock()
		if pause {
			time.Sleep(l.f.floodPause)
		}
	}
}

func (l *testLobby) malformed(b []byte) []byte {
	if !l.f.replyMalformed {
		return nil
	}
	return l.seal(udpwire.AppendJoinFailed(nil, udpwire.ProfileSpec, 0))
}

func (l *testLobby) handle(b []byte, from netip.AddrPort) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return nil
	}
	if l.f.rateLimit > 0 {
		bk := l.buckets[from.Addr()]
		if bk == nil {
			bk = &bucket{tokens: l.f.rateBurst, last: time.Now()}
			l.buckets[from.Addr()] = bk
		}
		if bk.take(time.Now(), l.f.rateLimit, l.f.rateBurst) != 0 {
			return nil
		}
	}
	if l.f.perSource > 0 {
		n := l.counts[from.Addr()]
		l.counts[from.Addr()]++
		if n%l.f.perSourceWindow >= l.f.perSource {
			return nil
		}
	}
	if l.f.floodPause > 0 && !l.paused && l.flooded(from.Addr()) {
		l.paused, l.pauseNow = true, true
	}
	if l.f.overload > 0 && l.flooded(from.Addr()) && (len(b) < 4 || binary.BigEndian.Uint16(b[2:])%l.f.overload != 0) {
		return nil
	}
	if len(b) < 12 {
		if l.f.crashOnTruncated {
			l.dead = true
			return nil
		}
		return l.malformed(b)
	}
	psize := int(binary.BigEndian.Uint16(b[4:]))
	if len(b) != 8+psize+4 {
		if l.f.crashOnTruncated && len(b) < 8+psize+4 {
			l.dead = true
			return nil
		}
		return l.malformed(b)
	}
	end := len(b) - 4
	if !l.f.noCRCCheck && binary.BigEndian.Uint32(b[end:]) != crc32.ChecksumIEEE(b[:end]) {
		return l.malformed(b)
	}
	pt, typ, seq := udpwire.PacketType(b[0]), udpwire.MsgType(b[1]), binary.BigEndian.Uint16(b[2:])
	if pt != udpwire.ClientToServer || binary.BigEndian.Uint16(b[6:]) != uint16(psize) {
		return l.malformed(b)
	}
	want := map[udpwire.MsgType]int{udpwire.LobbyListRooms: 0, udpwire.LobbyCreateRoom: 0, udpwire.LobbyJoinRoom: 4}
	if n, ok := want[typ]; !ok || n != psize {
		return l.malformed(b)
	}
	if l.f.die != "" && typ == l.f.dieOn {
		l.dead = true
		if l.f.onDie != nil {
			l.f.onDie()
		}
		if l.f.die == "abort" {
			l.conn.Close()
		}
		return nil
	}
	if s, ok := l.sessions[from]; ok && s.seq == seq && s.typ == typ && !(typ == udpwire.LobbyCreateRoom && l.f.dupCreateTwoRooms) {
		return s.reply
	}
	var out []byte
	p := udpwire.ProfileSpec
	switch typ {
	case udpwire.LobbyListRooms:
		out = l.list(seq)
		if l.f.listAnsweredFail {
			out = udpwire.AppendJoinFailed(nil, p, seq)
		}
	case udpwire.LobbyCreateRoom:
		if l.f.createSilent {
			return nil
		}
		if len(l.rooms) >= l.maxRooms || (l.f.poolFullSilent && !slices.Contains(l.byPort, nil)) {
			if l.f.poolFullSilent {
				return nil
			}
			out = udpwire.AppendJoinFailed(nil, p, seq)
			l.freeAfterFull()
			break
		}
		r, err := l.newRoom(from.Addr())
		if err != nil {
			out = udpwire.AppendJoinFailed(nil, p, seq)
			break
		}
		r.creator = from
		out = udpwire.AppendRoomCreated(nil, p, seq, r.id, r.port)
		if l.f.createdLong {
			out = append(out[:len(out)-4], 0, 0, 0, 0, 0)
			binary.BigEndian.PutUint16(out[4:], 7)
			binary.BigEndian.PutUint16(out[6:], 7)
		}
	case udpwire.LobbyJoinRoom:
		id := binary.BigEndian.Uint32(b[8:])
		r := l.rooms[id]
		if id == 0 && l.f.silentRoomZero {
			return nil
		}
		if id != 0 && r == nil && l.f.missingSilent {
			return nil
		}
		switch {
		case id == 0 || r == nil || l.f.joinRefused:
			out = udpwire.AppendJoinFailed(nil, p, seq)
		case len(r.players) >= l.maxPlayers && !l.f.joinFullAllowed:
			out = udpwire.AppendJoinFailed(nil, p, seq)
		case r.state != udpwire.Waiting && r.state != udpwire.Countdown && !l.f.joinPlayingOK:
			out = udpwire.AppendJoinFailed(nil, p, seq)
		default:
			r.active = time.Now()
			id, port := r.id, r.port
			if l.f.joinOtherID {
				id += 1000
			}
			if l.f.joinPortOff {
				port++
			}
			out = udpwire.AppendJoinSuccess(nil, p, seq, id, port)
		}
	}
	if udpwire.MsgType(out[1]) == udpwire.LobbyJoinFailed {
		if l.f.failedPacketType {
			out[0] = byte(udpwire.ClientToServer)
		}
		if l.f.failedOrigSize {
			binary.BigEndian.PutUint16(out[6:], 1)
		}
	}
	out = l.seal(out)
	l.sessions[from] = session{seq: seq, typ: typ, reply: out}
	return out
}

// flooded tracks floods (faults.overload, floodPause) as a lobby datagram from a
// arrives, and tells whether one is arriving: a came from the flooding
// address, or right after one of its datagrams.
func (l *testLobby) flooded(a netip.Addr) bool {
	prev := l.last
	l.last = a
	if a == prev {
		l.run++
	} else {
		l.run = 1
	}
	if l.run >= floodRun {
		l.flooder = a
	}
	if !l.flooder.IsValid() {
		return false
	}
	if a == l.flooder || prev == l.flooder {
		return true
	}
	l.flooder = netip.Addr{} // the flood is over
	return false
}

func (l *testLobby) list(seq uint16) []byte {
	var rooms []udpwire.Room
	last := l.nextID
	if l.f.listOmitsNewest && last > 0 {
		last--
	}
	for id := uint32(1); id <= last; id++ {
		if r := l.rooms[id]; r != nil {
			room := udpwire.Room{ID: r.id, Players: uint16(len(r.players)), MaxPlayers: uint16(l.maxPlayers), Port: r.port, State: r.state}
			if l.f.listCountLow && len(r.players) >= l.maxPlayers {
				room.Players = uint16(l.maxPlayers - 1)
			}
			if l.f.listNeverPlaying && r.state == udpwire.Playing {
				room.State = udpwire.Countdown
			}
			rooms = append(rooms, room)
		}
	}
	if l.f.listBogusEntry {
		rooms = append(rooms, udpwire.Room{MaxPlayers: uint16(l.maxPlayers)})
	}
	if l.nextID == 0 {
		for i := range l.f.ghosts { // a lazy server's list: rooms it has freed, their ports back in the pool
			rooms = append(rooms, udpwire.Room{ID: 1_000_000 + uint32(i), MaxPlayers: uint16(l.maxPlayers), Port: l.portLo + uint16(len(l.ports)-1-i)})
		}
	}
	p := udpwire.ProfileSpec
	if l.f.lobbySystemList {
		pl := binary.BigEndian.AppendUint32(nil, uint32(len(rooms)))
		for _, r := range rooms {
			pl = binary.BigEndian.AppendUint32(pl, r.ID)
			pl = binary.BigEndian.AppendUint16(pl, r.Port)
			pl = append(pl, byte(r.State))
			pl = binary.BigEndian.AppendUint32(pl, uint32(r.Players))
			pl = binary.BigEndian.AppendUint32(pl, uint32(r.MaxPlayers))
		}
		n := uint16(len(pl))
		return udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ServerToClient, Type: udpwire.LobbyRoomList, Seq: seq, PayloadSize: n, OriginalSize: n}, pl)
	}
	b, _ := udpwire.AppendRoomList(nil, p, seq, rooms)
	if l.f.wrongRoomCount {
		binary.BigEndian.PutUint16(b[8:], uint16(len(rooms)+1))
	}
	return b
}

// newRoom gives a free port to a new room created by from; an error when
// none is free or from is over its quota (JOIN_FAILED).
func (l *testLobby) newRoom(from netip.Addr) (*testRoom, error) {
	if l.perAddr > 0 {
		n := 0
		for _, r := range l.rooms {
			if r.owner == from {
				n++
			}
		}
		if n >= l.perAddr {
			return nil, net.ErrClosed
		}
	}
	idx := -1
	for i, r := range l.byPort {
		if r == nil {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, net.ErrClosed
	}
	c := l.ports[idx]
	l.nextID++
	r := &testRoom{id: l.nextID, port: uint16(c.LocalAddr().(*net.UDPAddr).Port), conn: c, out: c, idx: idx, owner: from,
		active: time.Now(), players: map[netip.AddrPort]bool{}, hellos: map[netip.AddrPort]bool{}}
	if l.f.instOtherPort {
		alt, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, err
		}
		l.alts = append(l.alts, alt) // closed with the instance sockets
		r.out = alt
	}
	l.rooms[r.id] = r
	l.byPort[idx] = r
	return r, nil
}

// freeAfterFull frees faults.freeOnFull rooms, the oldest, the first time
// the pool is found full: a cleanup that falls between a refusal and the
// next create.
func (l *testLobby) freeAfterFull() {
	if l.f.freeOnFull == 0 || l.freedOnFull {
		return
	}
	l.freedOnFull = true
	rooms := slices.SortedFunc(maps.Values(l.rooms), func(a, b *testRoom) int { return cmp.Compare(a.id, b.id) })
	for _, r := range rooms[:min(l.f.freeOnFull, len(rooms))] {
		delete(l.rooms, r.id)
		l.byPort[r.idx] = nil
	}
}

// cleanAtHello runs faults.cleanAtHello's cleanup when the first
// datagram to room r's instance is a CLIENT_HELLO (typ) from another
// endpoint than its creator's (a member who joined it through the lobby:
// the instance cases' room, shared with the lobby cases'), once a run,
// and reports whether it freed r.
func (l *testLobby) cleanAtHello(r *testRoom, typ udpwire.MsgType, from netip.AddrPort) bool {
	first := !r.spoken
	r.spoken = true
	if !l.f.cleanAtHello || l.cleanedAtHello || !first || typ != udpwire.ClientHello || from == r.creator || len(r.players) > 0 {
		return false
	}
	l.cleanedAtHello = true
	delete(l.rooms, r.id)
	r.gone = true // its port stays taken, dark: not handed to the next room
	return true
}

// janitor frees, lazily, rooms empty and idle for faults.cleanup (their
// port goes back to the pool); a room whose instance exited stays listed.
func (l *testLobby) janitor(done <-chan struct{}) {
	tk := time.NewTicker(l.f.cleanup / 4)
	defer tk.Stop()
	for {
		select {
		case <-done:
			return
		case <-tk.C:
		}
		l.mu.Lock()
		for id, r := range l.rooms {
			if len(r.players) == 0 && !r.gone && time.Since(r.active) >= l.f.cleanup {
				delete(l.rooms, id)
				l.byPort[r.idx] = nil
			}
		}
		l.mu.Unlock()
	}
}

// servePort is the game instance on port idx, serving whichever room holds
// the port: HELLO, JOIN_REQUEST, READY, PING, DISCONNECT; when every
// joined player is ready, ALL_READY, three ticks and GAME_START to all.
func (l *testLobby) servePort(idx int) {
	defer l.wg.Done()
	conn := l.ports[idx]
	buf := make([]byte, 2048)
	p := udpwire.ProfileSpec
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		var m udpwire.Message
		if (udpwire.Decoder{Profile: p, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelInstance}).Decode(buf[:n], &m) != nil {
			continue
		}
		l.mu.Lock()
		r := l.byPort[idx]
		if r == nil || r.gone {
			l.mu.Unlock()
			continue
		}
		r.active = time.Now()
		if l.cleanAtHello(r, m.Type, from) {
			l.mu.Unlock()
			continue // the room is gone: nothing answers on its port
		}
		send := func(to netip.AddrPort, b []byte) { r.out.WriteToUDPAddrPort(l.seal(b), to) }
		switch m.Type {
		case udpwire.ClientHello:
			if l.f.helloOnce {
				if r.hellos[from] {
					break
				}
				r.hellos[from] = true
			}
			typ := udpwire.ServerHello
			if _, in := r.players[from]; l.f.denyAtHello && !in && (len(r.players) >= l.maxPlayers || r.state != udpwire.Waiting) {
				typ = udpwire.ServerJoinDeny
			}
			b, _ := udpwire.AppendEmpty(nil, p, typ, m.Seq)
			send(from, b)
		case udpwire.ClientJoinRequest:
			typ := udpwire.ServerJoinAccept
			if l.f.denyJoin {
				typ = udpwire.ServerJoinDeny
			} else if _, in := r.players[from]; !in {
				if len(r.players) >= l.maxPlayers || r.state != udpwire.Waiting {
					typ = udpwire.ServerJoinDeny
				} else {
					r.players[from] = false
				}
			}
			b, _ := udpwire.AppendEmpty(nil, p, typ, m.Seq)
			send(from, b)
		case udpwire.ClientPing:
			if l.f.emptyPong {
				// The spec header (8 bytes) with payloadSize and
				// originalSize 0, then room for the CRC seal writes.
				b := append(udpwire.AppendPong(nil, p, m.Seq, m.Value)[:8:8], 0, 0, 0, 0)
				binary.BigEndian.PutUint32(b[4:], 0)
				send(from, b)
				break
			}
			send(from, udpwire.AppendPong(nil, p, m.Seq, m.Value))
		case udpwire.ClientReady:
			if _, in := r.players[from]; in && r.state == udpwire.Waiting {
				r.players[from] = true
				all := true
				for _, ready := range r.players {
					all = all && ready
				}
				if all {
					r.state = udpwire.Countdown
					l.wg.Add(1)
					go l.countdown(r)
				}
			}
		case udpwire.ClientDisconnect:
			if _, in := r.players[from]; in {
				delete(r.players, from)
				if len(r.players) == 0 && l.f.roomsOutlive {
					r.gone = true // the instance exits; the lobby keeps listing the room
				}
			}
		}
		l.mu.Unlock()
	}
}

func (l *testLobby) countdown(r *testRoom) {
	defer l.wg.Done()
	p := udpwire.ProfileSpec
	bcast := func(b []byte) {
		for ep := range r.players {
			r.out.WriteToUDPAddrPort(l.seal(append([]byte(nil), b...)), ep)
		}
	}
	l.mu.Lock()
	b, _ := udpwire.AppendEmpty(nil, p, udpwire.ServerAllReady, 0)
	bcast(b)
	l.mu.Unlock()
	for s := 3; s >= 1; s-- {
		time.Sleep(l.tick)
		l.mu.Lock()
		b, _ := udpwire.Append(nil, p, &udpwire.Message{Header: udpwire.Header{Type: udpwire.ServerCountdownTick}, Value: uint32(s)})
		bcast(b)
		l.mu.Unlock()
	}
	time.Sleep(l.tick)
	l.mu.Lock()
	r.state = udpwire.Playing
	b, _ = udpwire.AppendEmpty(nil, p, udpwire.ServerGameStart, 0)
	if l.f.startMissesOne {
		missed := false
		for ep := range r.players {
			if missed {
				r.out.WriteToUDPAddrPort(l.seal(append([]byte(nil), b...)), ep)
			}
			missed = true
		}
	} else {
		bcast(b)
	}
	l.mu.Unlock()
}
