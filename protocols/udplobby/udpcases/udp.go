package udpcases

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/refusals"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Names of the UDP lobby protocol and its document sections.
const (
	ProtoUDP = string(udpwire.ProtocolName)

	secOverview    = "udp-lobby.md §1 Overview"
	secPacket      = "udp-lobby.md §3 Packet structure"
	secListRooms   = "udp-lobby.md §4 LOBBY_LIST_ROOMS"
	secRoomList    = "udp-lobby.md §5 LOBBY_ROOM_LIST"
	secCreateRoom  = "udp-lobby.md §6 LOBBY_CREATE_ROOM"
	secRoomCreated = "udp-lobby.md §7 LOBBY_ROOM_CREATED"
	secJoinRoom    = "udp-lobby.md §8 LOBBY_JOIN_ROOM"
	secJoinSuccess = "udp-lobby.md §9 LOBBY_JOIN_SUCCESS"
	secJoinFailed  = "udp-lobby.md §10 LOBBY_JOIN_FAILED"
	secSequence    = "udp-lobby.md §12 Sequence numbers"
	secMalformed   = "udp-lobby.md §13 Error handling"
	secSecurity    = "udp-lobby.md §14 Security considerations"
	secInstance    = "udp-lobby.md §15 Game-instance handshake"
)

// Group is the protocol's group of the suite: the conformance half
// of its descriptor (package protocols), which registers it.
func Group() conformance.Group {
	return conformance.Group{Name: ProtoUDP, Transport: "udp", Reach: reachUDP, Flags: udpFlags,
		Options: func(o any) any {
			u, _ := o.(Options)
			return &u
		},
		Groups: []string{groupInstance}, OldGroups: map[string]string{"udp": ProtoUDP}, Cases: cases,
		Plausible: udpwire.LengthFits, ScriptTransport: scriptTransport,
	}
}

// groupInstance is the group of the UDP lobby's game-instance handshake
// cases: the one group not named after its protocol.
const groupInstance = "inst"

// Options are the udp-lobby group's settings (conformance.Config.Options): conform's
// --header and --instance-ports.
type Options struct {
	// Header is the header profile, or HeaderAuto (guess from the first
	// reply; the reachability check settles it).
	Header HeaderMode
	// HeaderGiven is set when --header was given: a case file's
	// header_profile then must agree with it (FileHeader).
	HeaderGiven bool
	// InstancePorts is the target's game-instance port range, if known.
	InstancePorts conformance.PortRange
}

// udpFlags declares conform's --header and --instance-ports.
func udpFlags(fs *flag.FlagSet) func() (any, error) {
	header := fs.String("header", "auto", "UDP header profile: spec, rtype17 or auto (guess from the first reply and say which); a case file's header_profile sets it when not given, and must agree when given")
	ports := fs.String("instance-ports", "", "the target's game-instance port `range` LO-HI (checks ports, lets the suite reach a small instance limit)")
	return func() (any, error) {
		var o Options
		var err error
		if o.Header, err = ParseHeaderMode(*header); err != nil {
			return nil, fmt.Errorf("--header: %v", err)
		}
		fs.Visit(func(f *flag.Flag) { o.HeaderGiven = o.HeaderGiven || f.Name == "header" })
		if *ports != "" {
			if o.InstancePorts, err = netrange.ParsePorts(*ports); err != nil {
				return nil, fmt.Errorf("--instance-ports: %v", err)
			}
		}
		return o, nil
	}
}

// udpOptions returns the run's udp-lobby settings (Env.Options).
func udpOptions(e *conformance.Env) *Options {
	if u, ok := e.Options.(*Options); ok {
		return u
	}
	return &Options{}
}

// HeaderMode is the --header setting: a fixed profile or auto.
type HeaderMode int

const (
	// HeaderSpec is the 8-byte header of udp-lobby.md §3.1.
	HeaderSpec HeaderMode = iota
	// HeaderRType17 is the 17-byte header of the public implementation.
	HeaderRType17
	// HeaderAuto guesses from the first reply.
	HeaderAuto
)

// ParseHeaderMode parses "spec", "rtype17" or "auto".
func ParseHeaderMode(s string) (HeaderMode, error) {
	switch s {
	case "spec":
		return HeaderSpec, nil
	case "rtype17":
		return HeaderRType17, nil
	case "auto":
		return HeaderAuto, nil
	}
	return 0, fmt.Errorf("invalid header %q (want spec, rtype17 or auto)", s)
}

// String returns the flag value.
func (h HeaderMode) String() string {
	switch h {
	case HeaderSpec:
		return "spec"
	case HeaderRType17:
		return "rtype17"
	case HeaderAuto:
		return "auto"
	}
	return fmt.Sprintf("HeaderMode(%d)", int(h))
}

// FileHeader settles a case file's header_profile, value, given at
// where (file:line), with the run's options opts (Config.Options, from
// the flags): it becomes the run's --header when --header was not given,
// and must be --header's value when it was. Both are read by
// ParseHeaderMode.
func FileHeader(opts any, value, where string) (any, error) {
	o, _ := opts.(Options)
	h, err := ParseHeaderMode(value)
	if err != nil {
		return nil, fmt.Errorf("%s: header_profile: %v", where, err)
	}
	switch {
	case !o.HeaderGiven:
		o.Header = h
	case h != o.Header:
		return nil, fmt.Errorf("%s: header_profile is %v, and --header %v: they disagree (give one, or the same)", where, h, o.Header)
	}
	return o, nil
}

// RunHeader is the header profile of the run (spec, rtype17), settled by
// the reachability check under --header auto: a user case's scripts send
// in it.
func RunHeader(e *conformance.Env) string { return headerProfile(e).String() }

// headerProfile returns the header profile settled for the run.
func headerProfile(e *conformance.Env) udpwire.Profile {
	if udpOptions(e).Header == HeaderRType17 {
		return udpwire.ProfileRType17
	}
	return udpwire.ProfileSpec
}

// seqCounter gives every request of a run its own sequence id, so replies
// are easy to tell apart in wire logs.
var seqCounter atomic.Uint32

func nextSeq() uint16 { return uint16(seqCounter.Add(7919)) }

// rawMsg is a datagram read leniently: the header fields under the run's
// profile, whatever their values, and the payload as the datagram frames it
// (between header and trailer). Cases that own a framing rule check it on
// the raw bytes; the others read fields through rawMsg, so a server with a
// bad CRC or a wrong sequence is reported by those cases alone.
type rawMsg struct {
	b       []byte
	hl      int
	pt      udpwire.PacketType
	typ     udpwire.MsgType
	seq     uint16
	psize   uint16
	osize   uint16
	payload []byte
	// from is the address the datagram came from, when the reader says.
	from netip.AddrPort
}

// parseRaw reads b leniently; ok is false when b is shorter than header +
// CRC.
func parseRaw(b []byte, p udpwire.Profile) (m rawMsg, ok bool) {
	hl := p.HeaderLen()
	if len(b) < hl+udpwire.CRCLen {
		return m, false
	}
	o := 0
	if p == udpwire.ProfileRType17 {
		o = 5
	}
	m.b, m.hl = b, hl
	m.pt = udpwire.PacketType(b[o])
	m.typ = udpwire.MsgType(b[o+1])
	m.seq = binary.BigEndian.Uint16(b[o+2:])
	m.psize = binary.BigEndian.Uint16(b[hl-4:])
	m.osize = binary.BigEndian.Uint16(b[hl-2:])
	m.payload = b[hl : len(b)-udpwire.CRCLen]
	return m, true
}

func (m rawMsg) String() string {
	return fmt.Sprintf("%v (%d bytes, payload %d)", m.typ, len(m.b), len(m.payload))
}

// roomRef reads the u32 roomId, u16 port payload of ROOM_CREATED and
// JOIN_SUCCESS.
func (m rawMsg) roomRef() (id uint32, port uint16, ok bool) {
	if len(m.payload) < 6 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(m.payload), binary.BigEndian.Uint16(m.payload[4:]), true
}

// rooms reads a ROOM_LIST payload in the canonical layout (u16 count, 11
// bytes per entry) without judging the entries; ok is false when the
// payload does not have that layout.
func (m rawMsg) rooms() ([]udpwire.Room, bool) {
	pl := m.payload
	if m.typ != udpwire.LobbyRoomList || len(pl) < 2 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint16(pl))
	if len(pl) != 2+n*udpwire.RoomEntryLen {
		return nil, false
	}
	out := make([]udpwire.Room, n)
	for i := range out {
		e := pl[2+i*udpwire.RoomEntryLen:]
		out[i] = udpwire.Room{
			ID: binary.BigEndian.Uint32(e), Players: binary.BigEndian.Uint16(e[4:]),
			MaxPlayers: binary.BigEndian.Uint16(e[6:]), Port: binary.BigEndian.Uint16(e[8:]),
			State: udpwire.RoomState(e[10]),
		}
	}
	return out, true
}

// crcDiagnosis names what a reply's CRC trailer is when it is not the
// big-endian CRC-32/IEEE of header+payload, or "" when it is right.
func crcDiagnosis(b []byte) string {
	if len(b) < udpwire.CRCLen {
		return "no room for a CRC trailer"
	}
	end := len(b) - udpwire.CRCLen
	got := binary.BigEndian.Uint32(b[end:])
	want := crc32.ChecksumIEEE(b[:end])
	switch {
	case got == want:
		return ""
	case binary.LittleEndian.Uint32(b[end:]) == want:
		return fmt.Sprintf("trailer %08x is the right CRC written little-endian (want big-endian %08x)", got, want)
	case got == crc32.Checksum(b[:end], crc32.MakeTable(crc32.Castagnoli)):
		return fmt.Sprintf("trailer %08x is CRC-32C (Castagnoli), want CRC-32/IEEE %08x", got, want)
	case got == 0:
		return fmt.Sprintf("trailer is zero (no CRC), want %08x", want)
	}
	return fmt.Sprintf("trailer %08x, want CRC-32/IEEE %08x over the %d bytes before it", got, want, end)
}

// exchange is one request to the lobby and its reply.
type exchange struct {
	seq   uint16
	req   []byte
	reply rawMsg
	// to is where the request went (reply.from, where the reply came
	// from, differs when the server answers through another socket).
	to   netip.AddrPort
	sock *conformance.UDPSocket // the socket that got the reply; the caller closes it
}

// lobbyRequest sends the request build(seq) to the lobby from a fresh
// socket and waits for one reply. On silence it retries once, with the same
// sequence, from a socket on another source address (a rate limiter may
// have dropped the first), and only then reports ErrSilence. The reply is
// read leniently (rawMsg). The caller must close x.sock.
func lobbyRequest(t *conformance.T, build func(seq uint16) []byte, note string) (*exchange, error) {
	return lobbyRequestTo(t, t.Env.Addr, build, note)
}

func lobbyRequestTo(t *conformance.T, dst netip.AddrPort, build func(seq uint16) []byte, note string) (*exchange, error) {
	seq := nextSeq()
	req := build(seq)
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		s, err := t.OpenUDP()
		if err != nil {
			return nil, err
		}
		n := note
		if attempt > 0 {
			n += " (retry from another source)"
		}
		if err := s.Send(dst, req, n); err != nil {
			s.Close()
			return nil, err
		}
		m, err := recvMessage(t, s, dst, n)
		if err != nil {
			s.Close()
			last = conformance.MergeSilence(last, err)
			if errors.Is(err, conformance.ErrSilence) {
				continue
			}
			return nil, err
		}
		if m.typ == udpwire.LobbyRoomCreated {
			if id, _, ok := m.roomRef(); ok {
				t.Env.NoteRoom(id)
			}
		}
		return &exchange{seq: seq, req: req, reply: m, to: dst, sock: s}, nil
	}
	return nil, last
}

// recvMessage reads the lobby's reply to what from s, passing over, until
// the timeout, datagrams that are no message (noted in the suite's junk
// log, which udp-lobby/3/5 judges): a lobby that sends junk before its
// reply is judged on the reply. Junk and nothing else is a failure that
// names it.
func recvMessage(t *conformance.T, s *conformance.UDPSocket, dst netip.AddrPort, what string) (rawMsg, error) {
	deadline := time.Now().Add(t.Env.Timeout)
	var junk []byte
	for left := t.Env.Timeout; left > 0; left = time.Until(deadline) {
		b, src, err := s.RecvFrom(dst, left)
		if junk != nil && errors.Is(err, conformance.ErrSilence) {
			break
		}
		if err != nil {
			return rawMsg{}, err
		}
		m, ok := parseRaw(b, headerProfile(t.Env))
		junkOf(t.Env).note(what, b, ok)
		if ok {
			m.from = src
			return m, nil
		}
		if junk == nil {
			junk = b
		}
	}
	// Only junk came: the loop goes round again only after some.
	return rawMsg{}, conformance.Failf("a reply of at least header + CRC bytes", "%d-byte datagram % x", len(junk), junk)
}

// expect checks a lobby exchange's outcome against the wanted reply types
// and returns the reply, or a VerifyError naming what came instead, owned
// by the case that judges the reply what (Case.Owns).
func expect(x *exchange, err error, what string, want ...udpwire.MsgType) (rawMsg, error) {
	if err != nil {
		if errors.Is(err, conformance.ErrSilence) {
			return rawMsg{}, conformance.Owned(ProtoUDP, what, conformance.Failf(what, "%s", conformance.ReplyWords(err, "no reply within the timeout, twice (from two source addresses)")))
		}
		return rawMsg{}, err
	}
	for _, w := range want {
		if x.reply.typ == w {
			return x.reply, nil
		}
	}
	return x.reply, conformance.Owned(ProtoUDP, what, conformance.Failf(what, "%v", x.reply))
}

func buildList(p udpwire.Profile) func(uint16) []byte {
	return func(seq uint16) []byte { return udpwire.AppendListRooms(nil, p, seq) }
}

func buildCreate(p udpwire.Profile) func(uint16) []byte {
	return func(seq uint16) []byte { return udpwire.AppendCreateRoom(nil, p, seq) }
}

func buildJoin(p udpwire.Profile, id uint32) func(uint16) []byte {
	return func(seq uint16) []byte { return udpwire.AppendJoinRoom(nil, p, seq, id) }
}

// listRooms asks for the room list and reads it in the canonical layout.
// A list that does not parse is a skip for the caller: udp-lobby/5/1 owns it.
func listRooms(t *conformance.T) ([]udpwire.Room, error) {
	x, err := lobbyRequest(t, buildList(headerProfile(t.Env)), "LOBBY_LIST_ROOMS")
	if x != nil {
		defer x.sock.Close()
	}
	m, err := expect(x, err, "LOBBY_ROOM_LIST", udpwire.LobbyRoomList)
	if err != nil {
		return nil, conformance.Precondition("list rooms", err)
	}
	rooms, ok := m.rooms()
	if !ok {
		return nil, conformance.Owned(ProtoUDP, "LOBBY_ROOM_LIST", conformance.Skipf("the room list does not have the canonical layout"))
	}
	return rooms, nil
}

// poolPoll is how often a refused create is retried while waiting for the
// server to free an instance.
const poolPoll = 500 * time.Millisecond

// createExchange sends LOBBY_CREATE_ROOM like lobbyRequest, and while the
// server answers LOBBY_JOIN_FAILED (no free instance) retries every
// poolPoll for Env.PoolWait: a lobby may free empty rooms lazily. It
// returns the last exchange (ROOM_CREATED, or the JOIN_FAILED that ended
// the wait) and how many refusals it met; the caller closes x.sock.
func createExchange(t *conformance.T, note string) (x *exchange, refused int, err error) {
	start := time.Now()
	for {
		x, err := lobbyRequest(t, buildCreate(headerProfile(t.Env)), note)
		if err != nil || x.reply.typ != udpwire.LobbyJoinFailed {
			if refused > 0 {
				t.Notef("the server had no free instance: waited %v (%d refusals) for its cleanup", time.Since(start).Round(100*time.Millisecond), refused)
			}
			return x, refused, err
		}
		refused++
		if time.Since(start) >= t.Env.PoolWait {
			return x, refused, nil
		}
		x.sock.Close()
		if err := t.Sleep(poolPoll); err != nil {
			return nil, refused, err
		}
	}
}

// noFreeInstance is the skip of a case whose room the server never had an
// instance for.
func noFreeInstance(t *conformance.T, refused int) error {
	return conformance.Skipf("LOBBY_CREATE_ROOM answered LOBBY_JOIN_FAILED %d times over --pool-wait %v: the server has no free instance, and freed none (this run made %d rooms itself)",
		refused, t.Env.PoolWait, t.Env.RoomsMade())
}

// createRoom creates a room (waiting for a free instance, see
// createExchange) and returns its id and port; a refusal and other
// problems are skips for the caller.
func createRoom(t *conformance.T) (id uint32, port uint16, sock *conformance.UDPSocket, err error) {
	x, refused, err := createExchange(t, "LOBBY_CREATE_ROOM")
	m, err := expect(x, err, "LOBBY_ROOM_CREATED", udpwire.LobbyRoomCreated)
	if err != nil {
		if x != nil {
			x.sock.Close()
		}
		if m.typ == udpwire.LobbyJoinFailed {
			return 0, 0, nil, noFreeInstance(t, refused)
		}
		return 0, 0, nil, conformance.Precondition("create a room", err)
	}
	id, port, ok := m.roomRef()
	if !ok || id == 0 || port == 0 {
		x.sock.Close()
		return 0, 0, nil, conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED payload", conformance.Skipf("LOBBY_ROOM_CREATED does not carry a usable roomId and port"))
	}
	return id, port, x.sock, nil
}

func findRoom(rooms []udpwire.Room, id uint32) (udpwire.Room, bool) {
	for _, r := range rooms {
		if r.ID == id {
			return r, true
		}
	}
	return udpwire.Room{}, false
}

// missingRoomID returns a room id that the list does not hold.
func missingRoomID(rooms []udpwire.Room) uint32 {
	id := uint32(0x7FFFFFF1)
	for {
		if _, ok := findRoom(rooms, id); !ok {
			return id
		}
		id--
	}
}

// alive checks the lobby still answers LIST_ROOMS, from two source
// addresses before concluding it does not. It returns the round-trip time.
func alive(t *conformance.T) (time.Duration, error) {
	start := time.Now()
	x, err := lobbyRequest(t, buildList(headerProfile(t.Env)), "liveness check")
	if x != nil {
		x.sock.Close()
	}
	if err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// reachUDP checks the lobby answers LIST_ROOMS and settles the header
// profile under --header auto: it sends the request in the spec profile
// and, only if that is not answered within a fifth of the timeout, in the
// rtype17 profile too (a lobby drops the one it does not speak: wrong
// length or CRC, but a fragile server might not), then guesses the profile
// from the reply. Silence is retried once from other source addresses. A
// reply that frames under no profile, lacks the rtype17 magic and whose
// length field does not fit its size under any profile is not taken as
// the lobby's: the check goes on listening, and fails naming it
// (conformance.Garbled) if nothing better comes.
func reachUDP(ctx context.Context, env *conformance.Env) (string, error) {
	t := conformance.NewT(ctx, env, &conformance.Case{ID: "reach", Protocol: ProtoUDP, Level: conformance.Info})
	modes := []HeaderMode{udpOptions(env).Header}
	if udpOptions(env).Header == HeaderAuto {
		modes = []HeaderMode{HeaderSpec, HeaderRType17}
	}
	var garbled []byte // the last reply of no profile and no magic
	for attempt := 0; attempt < 2; attempt++ {
		var socks []*conformance.UDPSocket
		var sockMode []HeaderMode
		start := time.Now()
		deadline := start.Add(env.Timeout)
		for {
			if len(socks) < len(modes) && (len(socks) == 0 || time.Since(start) >= env.Timeout/5) {
				m := modes[len(socks)]
				s, err := t.OpenUDP()
				if err != nil {
					return "", err
				}
				defer s.Close()
				if err := sendReach(env, s, m); err != nil {
					return "", err
				}
				socks = append(socks, s)
				sockMode = append(sockMode, m)
			}
			for i, s := range socks {
				b, err := s.Recv(env.Addr, 5*time.Millisecond)
				if err != nil {
					if errors.Is(err, conformance.ErrSilence) {
						continue
					}
					if errors.Is(err, syscall.ECONNREFUSED) {
						return "", fmt.Errorf("%w: %s: connection refused (nothing listens on that UDP port): %w", conformance.ErrUnreachable, env.Target, err)
					}
					return "", err
				}
				note, lobbys := settleHeader(env, b, sockMode[i])
				if !lobbys {
					garbled = b
					continue
				}
				return note, nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				break
			}
		}
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if udpOptions(env).Header == HeaderAuto {
		udpOptions(env).Header = HeaderSpec
	}
	if garbled != nil {
		return "", conformance.Garbled(env.Target, "LOBBY_LIST_ROOMS (header "+headerNames(modes)+")", garbled)
	}
	return "", fmt.Errorf("%w: %s did not answer LOBBY_LIST_ROOMS (header %s) within %v, twice", conformance.ErrUnreachable, env.Target, headerNames(modes), env.Timeout)
}

// sendReach sends reachUDP's LIST_ROOMS on s, framed in the profile of m.
func sendReach(env *conformance.Env, s *conformance.UDPSocket, m HeaderMode) error {
	refusals.Report(s.Conn())
	p := udpwire.ProfileSpec
	if m == HeaderRType17 {
		p = udpwire.ProfileRType17
	}
	return s.Send(env.Addr, udpwire.AppendListRooms(nil, p, nextSeq()), "reach")
}

// settleHeader judges reply b to reachUDP's request sent in mode m. lobbys
// is false when b frames under no profile, lacks the rtype17 magic and its
// length field fits no profile: not taken as the lobby's. Otherwise it
// settles --header auto from b (or from m when b frames under no profile)
// and returns the note saying how; under a fixed --header the note is "".
func settleHeader(env *conformance.Env, b []byte, m HeaderMode) (note string, lobbys bool) {
	p, ok := udpwire.GuessProfile(b)
	magic := len(b) >= 4 && [4]byte(b[:4]) == udpwire.Magic
	if !ok && !magic && !udpwire.LengthFits(b) {
		return "", false
	}
	if udpOptions(env).Header != HeaderAuto {
		return "", true
	}
	if ok {
		udpOptions(env).Header = HeaderSpec
		if p == udpwire.ProfileRType17 {
			udpOptions(env).Header = HeaderRType17
		}
		return fmt.Sprintf("header %s, guessed from the first reply", udpOptions(env).Header), true
	}
	udpOptions(env).Header = m
	if magic {
		udpOptions(env).Header = HeaderRType17
	}
	return fmt.Sprintf("header %s, assumed: the first reply frames under no profile (% x)", udpOptions(env).Header, b), true
}

func headerNames(m []HeaderMode) string {
	if len(m) == 2 {
		return "spec and rtype17"
	}
	return m[0].String()
}

// sourceSeen is one reply and the address its request went to.
type sourceSeen struct {
	name     string // e.g. "SERVER_HELLO"
	to, from netip.AddrPort
}

// judgeReplySource warns when a reply came from another port than the one
// its request was sent to (udp-lobby/3/4, inst/2/11): the suite accepted it, a
// client behind NAT or with a connected socket would not.
func judgeReplySource(t *conformance.T, what string, seen []sourceSeen) error {
	if len(seen) == 0 {
		return conformance.Skipf("no reply to look at")
	}
	var bad []string
	for _, x := range seen {
		if x.from.IsValid() && x.from != x.to {
			bad = append(bad, fmt.Sprintf("%s came from port %d (sent to %v)", x.name, x.from.Port(), x.to))
		}
	}
	if len(bad) > 0 {
		return conformance.Warnf("every "+what+" reply from the address and port the request was sent to",
			"%s. The suite took these replies and went on; a client behind NAT drops them (its mapping is for the port it sent to), "+
				"and so does a client whose socket is connected (connect(2)) to that port", strings.Join(bad, "; "))
	}
	t.Notef("%d replies checked", len(seen))
	return nil
}
