package udpcases

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// player is one simulated player on a game instance (udp-lobby.md §15).
type player struct {
	t    *conformance.T
	s    *conformance.UDPSocket
	inst netip.AddrPort
	// pending holds messages received while waiting for another type
	// (broadcasts such as COUNTDOWN_TICK).
	pending []rawMsg
}

func instAddr(t *conformance.T, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(t.Env.Addr.Addr(), port)
}

func newPlayer(t *conformance.T, s *conformance.UDPSocket, port uint16) *player {
	return &player{t: t, s: s, inst: instAddr(t, port)}
}

func (p *player) build(typ udpwire.MsgType, seq uint16) []byte {
	prof := headerProfile(p.t.Env)
	if typ == udpwire.ClientPing {
		return udpwire.AppendPing(nil, prof, seq, 0x5EED1234)
	}
	if typ == udpwire.ClientDisconnect {
		b, _ := udpwire.Append(nil, prof, &udpwire.Message{Header: udpwire.Header{Type: typ, Seq: seq}})
		return b
	}
	b, err := udpwire.AppendEmpty(nil, prof, typ, seq)
	if err != nil {
		panic(err)
	}
	return b
}

// call sends typ and waits for a reply of one of the wanted types; other
// messages are kept in pending. On silence it resends once from the same
// socket (the instance knows the player by its endpoint) with the same
// sequence. It returns the reply and the sequence sent.
func (p *player) call(typ udpwire.MsgType, want ...udpwire.MsgType) (rawMsg, uint16, error) {
	seq := nextSeq()
	req := p.build(typ, seq)
	var last error = conformance.ErrSilence
	for attempt := 0; attempt < 2; attempt++ {
		note := typ.String()
		if attempt > 0 {
			note += " (retry)"
		}
		if err := p.s.Send(p.inst, req, note); err != nil {
			return rawMsg{}, seq, err
		}
		m, err := p.wait(p.t.Env.Timeout, want...)
		if errors.Is(err, conformance.ErrSilence) {
			last = conformance.MergeSilence(last, err)
			continue
		}
		return m, seq, err
	}
	return rawMsg{}, seq, last
}

// wait returns the first message (pending first) of one of the wanted
// types within d. Replies from another port of the instance's host are
// accepted (rawMsg.from says which port answered).
func (p *player) wait(d time.Duration, want ...udpwire.MsgType) (rawMsg, error) {
	for i, m := range p.pending {
		if hasType(want, m.typ) {
			p.pending = append(p.pending[:i:i], p.pending[i+1:]...)
			return m, nil
		}
	}
	deadline := time.Now().Add(d)
	var junk [][]byte // datagrams from the instance that do not parse
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return rawMsg{}, p.silence(want, junk)
		}
		b, src, err := p.s.RecvFrom(p.inst, left)
		if errors.Is(err, conformance.ErrSilence) {
			// Say what did come: other types waiting unread, or
			// datagrams that do not parse.
			return rawMsg{}, conformance.MergeSilence(p.silence(want, junk), err)
		}
		if err != nil {
			return rawMsg{}, err
		}
		m, ok := parseRaw(b, headerProfile(p.t.Env))
		if !ok {
			junk = append(junk, b)
			continue
		}
		m.from = src
		if hasType(want, m.typ) {
			return m, nil
		}
		p.pending = append(p.pending, m)
	}
}

// silence is the silence of a wait for want: what came instead (the
// unread messages of other types, the datagrams that did not parse).
func (p *player) silence(want []udpwire.MsgType, junk [][]byte) error {
	var names []string
	var msgs [][]byte
	for _, m := range p.pending {
		names, msgs = append(names, m.typ.String()), append(msgs, m.b)
	}
	for _, b := range junk {
		names, msgs = append(names, fmt.Sprintf("a %d-byte datagram that does not parse", len(b))), append(msgs, b)
	}
	return conformance.Instead(typeList(want), names, msgs)
}

func hasType(ts []udpwire.MsgType, t udpwire.MsgType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// handshake sends HELLO then JOIN_REQUEST and returns the JOIN reply type
// (SERVER_JOIN_ACCEPT or SERVER_JOIN_DENY).
func (p *player) handshake() (udpwire.MsgType, error) {
	m, _, err := p.call(udpwire.ClientHello, udpwire.ServerHello)
	if err != nil {
		return 0, conformance.Owned(ProtoUDP, "SERVER_HELLO", fmt.Errorf("CLIENT_HELLO to %v: %w", p.inst, err))
	}
	m, _, err = p.call(udpwire.ClientJoinRequest, udpwire.ServerJoinAccept, udpwire.ServerJoinDeny)
	if err != nil {
		return 0, conformance.Owned(ProtoUDP, "SERVER_JOIN_ACCEPT", fmt.Errorf("CLIENT_JOIN_REQUEST to %v: %w", p.inst, err))
	}
	return m.typ, nil
}

// joinRefusal is why a handshake that should have admitted the player did
// not (err, or the JOIN reply typ), owned by the case judging that reply.
func joinRefusal(err error, typ udpwire.MsgType) error {
	if err != nil {
		return err
	}
	return conformance.Owned(ProtoUDP, "SERVER_JOIN_ACCEPT", errors.New("answered "+typ.String()))
}

func (p *player) leave() {
	p.s.Send(p.inst, p.build(udpwire.ClientDisconnect, nextSeq()), "CLIENT_DISCONNECT (cleanup)")
	p.s.Close()
}

// replySet is one exchange of each lobby request, shared by the framing,
// size and sequence cases: CREATE, then LIST (so the list holds a room),
// JOIN of the created room, JOIN of a missing room.
type replySet struct {
	create, list, joinOK, joinMissing *exchange
	// errors of the exchanges that did not complete
	createErr, listErr, joinOKErr, joinMissingErr error
	// createRefused counts the JOIN_FAILED answers the create met while
	// waiting for a free instance.
	createRefused int
	roomID        uint32
	port          uint16
}

// all returns the completed exchanges with their names.
func (r *replySet) all() []namedExchange {
	var out []namedExchange
	for _, x := range []namedExchange{{"LOBBY_LIST_ROOMS", r.list}, {"LOBBY_CREATE_ROOM", r.create},
		{"LOBBY_JOIN_ROOM (existing room)", r.joinOK}, {"LOBBY_JOIN_ROOM (missing room)", r.joinMissing}} {
		if x.x != nil {
			out = append(out, x)
		}
	}
	return out
}

type namedExchange struct {
	name string
	x    *exchange
}

func replies(t *conformance.T) (*replySet, error) {
	v, err := t.Fixture("udp-replies", func(ft *conformance.T) (any, error) {
		r := &replySet{}
		prof := headerProfile(ft.Env)
		closeX := func(x *exchange) {
			if x != nil {
				x.sock.Close()
			}
		}
		r.create, r.createRefused, r.createErr = createExchange(ft, "LOBBY_CREATE_ROOM")
		closeX(r.create)
		if r.create != nil && r.create.reply.typ == udpwire.LobbyRoomCreated {
			r.roomID, r.port, _ = r.create.reply.roomRef()
		}
		r.list, r.listErr = lobbyRequest(ft, buildList(prof), "LOBBY_LIST_ROOMS")
		closeX(r.list)
		var rooms []udpwire.Room
		if r.list != nil {
			rooms, _ = r.list.reply.rooms()
		}
		if r.roomID != 0 {
			r.joinOK, r.joinOKErr = lobbyRequest(ft, buildJoin(prof, r.roomID), "LOBBY_JOIN_ROOM of the created room")
			if r.joinOK != nil {
				// Kept open: the instance fixture enters the room with it
				// (the seat this JOIN holds), so the two share one room.
				ft.Env.Cleanup(r.joinOK.sock.Close)
			}
		} else {
			r.joinOKErr = conformance.Owned(ProtoUDP, "LOBBY_ROOM_CREATED", conformance.Skipf("no room was created"))
		}
		r.joinMissing, r.joinMissingErr = lobbyRequest(ft, buildJoin(prof, missingRoomID(rooms)), "LOBBY_JOIN_ROOM of a missing room")
		closeX(r.joinMissing)
		if r.create == nil && r.list == nil && r.joinOK == nil && r.joinMissing == nil {
			return nil, fmt.Errorf("no lobby request was answered")
		}
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*replySet), nil
}

// roomFx is a room the suite filled or started through the instance
// handshake.
type roomFx struct {
	id      uint32
	port    uint16
	max     int
	players []*player
	// started: every player received SERVER_GAME_START; msgs are the types
	// each player received while waiting.
	started   bool
	gotStart  []bool
	msgs      [][]udpwire.MsgType
	listed    udpwire.Room // the room as listed at the end of the setup
	hasListed bool
}

// joinedRoom creates a room and brings n players into it through the
// instance handshake: the creator directly (udp-lobby.md §11, creating a room), the others
// after a lobby JOIN (flow 1). n < 0 means "fill it" (maxPlayers as listed).
func joinedRoom(ft *conformance.T, n int) (*roomFx, error) {
	id, port, creator, err := createRoom(ft)
	if err != nil {
		return nil, err
	}
	rooms, err := listRooms(ft)
	if err != nil {
		creator.Close()
		return nil, err
	}
	r, ok := findRoom(rooms, id)
	if !ok {
		creator.Close()
		return nil, conformance.Owned(ProtoUDP, "a created room in LOBBY_ROOM_LIST", conformance.Skipf("room %d is not in the list after its creation", id))
	}
	fx := &roomFx{id: id, port: port, max: int(r.MaxPlayers)}
	if fx.max < 1 || fx.max > 64 {
		creator.Close()
		return nil, conformance.Skipf("room %d lists maxPlayers %d: cannot fill it", id, r.MaxPlayers)
	}
	if n < 0 || n > fx.max {
		n = fx.max
	}
	ft.Env.Cleanup(func() {
		for _, p := range fx.players {
			p.leave()
		}
	})
	pl := newPlayer(ft, creator, port)
	fx.players = append(fx.players, pl)
	if typ, err := pl.handshake(); err != nil || typ != udpwire.ServerJoinAccept {
		why := joinRefusal(err, typ)
		return nil, conformance.SkipFor(why, "the creator could not join its instance: %v", why)
	}
	for len(fx.players) < n {
		x, err := lobbyRequest(ft, buildJoin(headerProfile(ft.Env), id), "LOBBY_JOIN_ROOM (filling)")
		m, err := expect(x, err, "LOBBY_JOIN_SUCCESS", udpwire.LobbyJoinSuccess)
		if err != nil {
			if x != nil {
				x.sock.Close()
			}
			return nil, conformance.SkipFor(err, "the lobby refused join #%d while the room held %d of %d: %v", len(fx.players)+1, len(fx.players), fx.max, err)
		}
		_, jport, _ := m.roomRef()
		if jport != port {
			x.sock.Close()
			return nil, conformance.Owned(ProtoUDP, "a stable room port", conformance.Skipf("LOBBY_JOIN_SUCCESS gave port %d, the creation %d", jport, port))
		}
		p := newPlayer(ft, x.sock, port)
		fx.players = append(fx.players, p)
		if typ, err := p.handshake(); err != nil || typ != udpwire.ServerJoinAccept {
			why := joinRefusal(err, typ)
			return nil, conformance.SkipFor(why, "player %d could not join the instance: %v", len(fx.players), why)
		}
	}
	return fx, nil
}

// relist polls the list (a few times, 100 ms apart) until cond holds for the
// room and records the last listing.
func (fx *roomFx) relist(ft *conformance.T, cond func(udpwire.Room) bool) {
	for i := 0; i < 10; i++ {
		rooms, err := listRooms(ft)
		if err == nil {
			if r, ok := findRoom(rooms, fx.id); ok {
				fx.listed, fx.hasListed = r, true
				if cond(r) {
					return
				}
			}
		}
		if ft.Sleep(100*time.Millisecond) != nil {
			return
		}
	}
}

// fullRoom is a room filled to its maxPlayers through the handshake.
func fullRoom(t *conformance.T) (*roomFx, error) {
	v, err := t.Fixture("udp-full-room", func(ft *conformance.T) (any, error) {
		fx, err := joinedRoom(ft, -1)
		if err != nil {
			return nil, err
		}
		fx.relist(ft, func(r udpwire.Room) bool { return int(r.Players) >= fx.max })
		return fx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*roomFx), nil
}

// startWait bounds the wait for SERVER_GAME_START after every player is
// ready (a 3-2-1 countdown of one second per tick, and margin).
const startWait = 10 * time.Second

// playingRoom is a room whose players all sent CLIENT_READY, with what they
// received until SERVER_GAME_START. It holds two players when maxPlayers
// allows a third, so that a JOIN refused later is refused for the state,
// not for a full room.
func playingRoom(t *conformance.T) (*roomFx, error) {
	v, err := t.Fixture("udp-playing-room", func(ft *conformance.T) (any, error) {
		fx, err := joinedRoom(ft, 2)
		if err != nil {
			return nil, err
		}
		for _, p := range fx.players {
			if err := p.s.Send(p.inst, p.build(udpwire.ClientReady, nextSeq()), "CLIENT_READY"); err != nil {
				return nil, err
			}
		}
		deadline := time.Now().Add(startWait)
		fx.started = true
		fx.gotStart = make([]bool, len(fx.players))
		fx.msgs = make([][]udpwire.MsgType, len(fx.players))
		for i, p := range fx.players {
			_, err := p.wait(time.Until(deadline), udpwire.ServerGameStart)
			if err != nil && !errors.Is(err, conformance.ErrSilence) {
				return nil, err // interrupted: not the server's fault
			}
			for _, m := range p.pending {
				fx.msgs[i] = append(fx.msgs[i], m.typ)
			}
			p.pending = nil
			if err == nil {
				fx.gotStart[i] = true
				fx.msgs[i] = append(fx.msgs[i], udpwire.ServerGameStart)
			} else {
				fx.started = false
			}
		}
		if fx.started {
			fx.relist(ft, func(r udpwire.Room) bool { return r.State == udpwire.Playing })
		}
		return fx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*roomFx), nil
}
