package udpcases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// udp-lobby.md §15: the game-instance handshake on the port the lobby
// returned (udp-lobby.md §11: "Client → Instance: CLIENT_HELLO (game
// protocol)"; the message set is the public implementation's).

const pingTime = 0x5EED1234

func init() {
	addCase(&conformance.Case{
		ID: "inst/2/1", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Owns:        []string{"SERVER_HELLO"},
		Desc:        "the port LOBBY_ROOM_CREATED returned answers CLIENT_HELLO with SERVER_HELLO, and keeps answering",
		Requirement: "If success: Client connects to game instance at specified port; Client → Instance: CLIENT_HELLO (udp-lobby.md §11); HELLO→HELLO (udp-lobby.md §15)",
		Run:         runInst2_1,
	})
	addCase(&conformance.Case{
		ID: "inst/2/2", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Owns:        []string{"SERVER_JOIN_ACCEPT"},
		Desc:        "CLIENT_JOIN_REQUEST to an instance with a free seat is answered with SERVER_JOIN_ACCEPT",
		Requirement: "JOIN_REQUEST→JOIN_ACCEPT (or JOIN_DENY when the room is full or already playing) (udp-lobby.md §15)",
		Run:         runInst2_2,
	})
	addCase(&conformance.Case{
		ID: "inst/2/3", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Desc:        "CLIENT_PING is answered with SERVER_PONG echoing clientTime",
		Requirement: "CLIENT_PING u32 clientTime … SERVER_PONG u32 clientTime (echoed); PING→PONG (udp-lobby.md §15)",
		Run:         runInst2_3,
	})
	addCase(&conformance.Case{
		ID: "inst/2/4", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Desc:        "CLIENT_JOIN_REQUEST to a full instance is answered with SERVER_JOIN_DENY",
		Requirement: "JOIN_REQUEST→JOIN_ACCEPT (or JOIN_DENY when the room is full or already playing) (udp-lobby.md §15)",
		Run:         runInst2_4,
	})
	addCase(&conformance.Case{
		ID: "inst/2/5", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Owns:        []string{"SERVER_GAME_START"},
		Desc:        "when every joined player is ready, SERVER_GAME_START reaches every player",
		Requirement: "When every joined player is ready the instance counts down and sends GAME_START to all (udp-lobby.md §15)",
		Run:         runInst2_5,
	})
	addCase(&conformance.Case{
		ID: "inst/2/6", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Desc:        "the lobby's list follows the instance: a room filled through the handshake is listed with playerCount = maxPlayers",
		Requirement: "the room's state, as the lobby lists it, follows (udp-lobby.md §15); RoomInfo playerCount: Current player count (udp-lobby.md §5)",
		Run:         runInst2_6,
	})
	addCase(&conformance.Case{
		ID: "inst/2/7", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Desc:        "the lobby's list follows the instance: a started game is listed as Playing",
		Requirement: "the room's state, as the lobby lists it, follows (Waiting → Countdown → Playing → Finished) (udp-lobby.md §15)",
		Run:         runInst2_7,
	})
	addCase(&conformance.Case{
		ID: "inst/2/8", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Must,
		Desc:        "CLIENT_JOIN_REQUEST to an instance whose game started is answered with SERVER_JOIN_DENY",
		Requirement: "JOIN_REQUEST→JOIN_ACCEPT (or JOIN_DENY when the room is full or already playing) (udp-lobby.md §15)",
		Run:         runInst2_8,
	})
	addCase(&conformance.Case{
		ID: "inst/2/10", Protocol: ProtoUDP, Section: secInstance, Rule: string(udpwire.RuleCRC), Level: conformance.Must,
		Desc:        "instance replies are framed like the lobby's: CRC-32 big-endian, packetType 0x02, length = header + payloadSize + 4",
		Requirement: "The public implementation of this lobby uses the same header and CRC as the lobby for its instances (udp-lobby.md §15)",
		Run:         runInst2_10,
	})
	addCase(&conformance.Case{
		ID: "inst/2/11", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Should,
		Desc:        "instance replies come from the port the lobby returned (the port the client sends to)",
		Requirement: "If success: Client connects to game instance at specified port (udp-lobby.md §11); NAT and connected UDP sockets only pass replies from that port",
		Run:         runInst2_11,
	})
	addCase(&conformance.Case{
		ID: "inst/2/12", Protocol: ProtoUDP, Section: secInstance, Level: conformance.Should, Phase: conformance.PhaseSerial,
		Desc:        "a room stays listed only while its instance answers: after its last player leaves, the room leaves the list or its port still answers CLIENT_HELLO",
		Requirement: "the room's state, as the lobby lists it, follows the instance (udp-lobby.md §15); a listed room whose port is dead sends every joiner to nothing",
		Run:         instRoomOutlivesInstance,
	})
	addCase(&conformance.Case{
		ID: "inst/2/9", Protocol: ProtoUDP, Section: secInstance, Rule: "I-SEQ", Level: conformance.Must,
		Desc:        "instance replies echo the request's sequenceId",
		Requirement: "Replies echo the request's sequenceId (udp-lobby.md §15)",
		Run:         runInst2_9,
	})
}

func runInst2_1(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	if e := fx.hello.judge("SERVER_HELLO", udpwire.ServerHello); e != nil {
		return e
	}
	return fx.hello2.judge("SERVER_HELLO to a second CLIENT_HELLO a moment later (the port is stable)", udpwire.ServerHello)
}

func runInst2_2(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	return fx.join.judge("SERVER_JOIN_ACCEPT", udpwire.ServerJoinAccept)
}

func runInst2_3(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	if e := fx.pong.judge("SERVER_PONG", udpwire.ServerPong); e != nil {
		return e
	}
	m := fx.pong.reply
	want := fmt.Sprintf("SERVER_PONG with the 4-byte clientTime %08x", pingTime)
	switch {
	case len(m.payload) == 0:
		return conformance.Failf(want, "SERVER_PONG with payloadSize %d: no clientTime echoed", m.psize)
	case len(m.payload) != 4:
		return conformance.Failf(want, "SERVER_PONG with payloadSize %d (%s): clientTime is 4 bytes", m.psize, conformance.HexShort(m.payload))
	case binary.BigEndian.Uint32(m.payload) != pingTime:
		return conformance.Failf(want, "SERVER_PONG echoing clientTime %08x, not the %08x sent", binary.BigEndian.Uint32(m.payload), pingTime)
	}
	return nil
}

func runInst2_4(t *conformance.T) error {
	fx, err := fullRoom(t)
	if err != nil {
		return err
	}
	return extraJoin(t, fx, "full")
}

func runInst2_5(t *conformance.T) error {
	fx, err := playingRoom(t)
	if err != nil {
		return err
	}
	for i := range fx.players {
		t.Notef("player %d received %s", i+1, typeList(fx.msgs[i]))
	}
	if !fx.started {
		var missing []string
		for i, ok := range fx.gotStart {
			if !ok {
				missing = append(missing, fmt.Sprint(i+1))
			}
		}
		return conformance.Failf(fmt.Sprintf("SERVER_GAME_START to each of the %d ready players within %v", len(fx.players), startWait),
			"player(s) %s never received it", strings.Join(missing, ", "))
	}
	return nil
}

func runInst2_6(t *conformance.T) error {
	fx, err := fullRoom(t)
	if err != nil {
		return err
	}
	if !fx.hasListed {
		return conformance.Owned(ProtoUDP, "a created room in LOBBY_ROOM_LIST", conformance.Skipf("the room was not found in the list"))
	}
	if int(fx.listed.Players) != fx.max {
		return conformance.Failf(fmt.Sprintf("room %d listed with playerCount %d", fx.id, fx.max), "playerCount %d of %d after %d players joined the instance", fx.listed.Players, fx.listed.MaxPlayers, len(fx.players))
	}
	return nil
}

func runInst2_7(t *conformance.T) error {
	fx, err := playingRoom(t)
	if err != nil {
		return err
	}
	if !fx.started {
		return conformance.Owned(ProtoUDP, "SERVER_GAME_START", conformance.Skipf("the game never started"))
	}
	if !fx.hasListed {
		return conformance.Owned(ProtoUDP, "a created room in LOBBY_ROOM_LIST", conformance.Skipf("the room was not found in the list"))
	}
	if fx.listed.State != udpwire.Playing {
		return conformance.Failf(fmt.Sprintf("room %d listed as Playing after SERVER_GAME_START", fx.id), "listed as %v (polled for 1 s)", fx.listed.State)
	}
	return nil
}

func runInst2_8(t *conformance.T) error {
	fx, err := playingRoom(t)
	if err != nil {
		return err
	}
	if !fx.started {
		return conformance.Owned(ProtoUDP, "SERVER_GAME_START", conformance.Skipf("the game never started"))
	}
	return extraJoin(t, fx, "playing")
}

func runInst2_10(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	p := headerProfile(t.Env)
	var bad []string
	n := 0
	for _, c := range []*instCall{&fx.hello, &fx.hello2, &fx.join, &fx.pong} {
		if c.err != nil {
			continue
		}
		n++
		m := c.reply
		if d := crcDiagnosis(m.b); d != "" {
			bad = append(bad, fmt.Sprintf("%v: %s", m.typ, d))
		}
		if m.pt != udpwire.ServerToClient {
			bad = append(bad, fmt.Sprintf("%v: packetType 0x%02x", m.typ, uint8(m.pt)))
		}
		if want := p.PacketLen(int(m.psize)); len(m.b) != want || m.osize != m.psize {
			bad = append(bad, fmt.Sprintf("%v: %d bytes, payloadSize %d, originalSize %d", m.typ, len(m.b), m.psize, m.osize))
		}
	}
	if n == 0 {
		return conformance.Owned(ProtoUDP, "SERVER_HELLO", conformance.Skipf("the instance answered nothing"))
	}
	if len(bad) > 0 {
		return conformance.Fail("every instance reply framed like the lobby's", strings.Join(bad, "; "))
	}
	return nil
}

func runInst2_11(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	var seen []sourceSeen
	for _, c := range []*instCall{&fx.hello, &fx.hello2, &fx.join, &fx.pong} {
		if c.err == nil {
			seen = append(seen, sourceSeen{name: fmt.Sprintf("%v (reply to %v)", c.reply.typ, c.req), to: instAddr(t, fx.port), from: c.reply.from})
		}
	}
	if len(seen) == 0 {
		return conformance.Owned(ProtoUDP, "SERVER_HELLO", conformance.Skipf("the instance answered nothing"))
	}
	return judgeReplySource(t, "instance", seen)
}

func runInst2_9(t *conformance.T) error {
	fx, err := instance(t)
	if err != nil {
		return err
	}
	var bad []string
	n := 0
	for _, c := range []*instCall{&fx.hello, &fx.hello2, &fx.join, &fx.pong} {
		if c.err != nil {
			continue
		}
		n++
		if c.reply.seq != c.seq {
			bad = append(bad, fmt.Sprintf("%v: sent %d, reply %v carries %d", c.req, c.seq, c.reply.typ, c.reply.seq))
		}
	}
	if n == 0 {
		return conformance.Owned(ProtoUDP, "SERVER_HELLO", conformance.Skipf("the instance answered nothing"))
	}
	if len(bad) > 0 {
		return conformance.Fail("the request's sequenceId in every instance reply", strings.Join(bad, "; "))
	}
	return nil
}

func typeList(ts []udpwire.MsgType) string {
	if len(ts) == 0 {
		return "nothing"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// extraJoin brings one more player to the instance of fx (straight to the
// instance: the lobby would refuse it) and expects SERVER_JOIN_DENY.
func extraJoin(t *conformance.T, fx *roomFx, why string) error {
	s, err := t.OpenUDP()
	if err != nil {
		return err
	}
	p := newPlayer(t, s, fx.port)
	defer p.leave()
	typ, err := p.handshake()
	if err != nil {
		var s *conformance.Silence
		if errors.As(err, &s) && s.Sent(udpwire.ServerJoinDeny.String()) {
			// Refused, but at the first message: the newcomer is kept
			// out, which is what the case checks, so no failure. A warning
			// all the same: PROTOCOLS.md §2 answers HELLO with SERVER_HELLO
			// and refuses at JOIN_REQUEST, and a client waiting for
			// SERVER_HELLO may wait out its timeout instead of reading
			// the refusal.
			return conformance.Warnf(fmt.Sprintf("SERVER_JOIN_DENY in answer to CLIENT_JOIN_REQUEST (room %d is %s)", fx.id, why),
				"the newcomer was refused at CLIENT_HELLO, before its CLIENT_JOIN_REQUEST: %v. PROTOCOLS.md §2 has SERVER_HELLO answer "+
					"CLIENT_HELLO; a client that waits for it may wait out its timeout instead of reading the refusal", err)
		}
		if errors.Is(err, conformance.ErrSilence) {
			return conformance.Failf("SERVER_JOIN_DENY", "%s", conformance.ReplyWords(err, "no reply: "+err.Error()))
		}
		return err
	}
	if typ != udpwire.ServerJoinDeny {
		return conformance.Failf(fmt.Sprintf("SERVER_JOIN_DENY (room %d is %s with %d of %d players)", fx.id, why, len(fx.players), fx.max), "%v", typ)
	}
	return nil
}

// instCall is one instance request and its outcome.
type instCall struct {
	req   udpwire.MsgType
	seq   uint16
	reply rawMsg
	err   error
}

func (c *instCall) judge(what string, want udpwire.MsgType) error {
	if c.err != nil {
		if errors.Is(c.err, conformance.ErrSilence) {
			return conformance.Failf(what, "%s", conformance.ReplyWords(c.err, fmt.Sprintf("no reply to %v within the timeout, twice", c.req)))
		}
		return conformance.Precondition(c.req.String(), c.err)
	}
	if c.reply.typ != want {
		return conformance.Failf(what, "%v", c.reply)
	}
	return nil
}

// call sends typ from p and keeps what came (a reply of want, or the
// error).
func (c *instCall) call(p *player, typ udpwire.MsgType, want ...udpwire.MsgType) {
	c.req = typ
	c.reply, c.seq, c.err = p.call(typ, want...)
}

// freshInstance is the instance fixture's second try, when the room it
// shared with the lobby requests' fixture answered its CLIENT_HELLO with
// silence: a server that cleans up empty rooms lazily may have freed it
// while the lobby's cases ran (no player had joined its instance yet).
// A room created now tells that apart from an instance that does not
// answer: its CLIENT_HELLO's outcome is the one the cases judge. When no
// room can be created, the shared room's silence stands.
func freshInstance(ft *conformance.T, fx *instFx, shared uint32, p *player, hello []udpwire.MsgType) *player {
	id, port, s, err := createRoom(ft)
	if err != nil {
		ft.Notef("room %d's instance was silent, and a fresh room could not be created (%v): its silence stands", shared, err)
		return p
	}
	ft.Notef("room %d's instance was silent (the server may have cleaned the room up while the lobby's cases ran): room %d, created now, is judged instead", shared, id)
	q := newPlayer(ft, s, port)
	ft.Env.Cleanup(q.leave)
	fx.port = port
	fx.hello.call(q, udpwire.ClientHello, hello...)
	return q
}

type instFx struct {
	port                      uint16
	hello, hello2, join, pong instCall
}

// instance creates a room and exchanges HELLO, HELLO again, JOIN_REQUEST
// and PING with its instance, recording the outcomes for the cases.
func instance(t *conformance.T) (*instFx, error) {
	v, err := t.Fixture("udp-instance", func(ft *conformance.T) (any, error) {
		// Share the lobby fixture's room (its JOIN_SUCCESS socket holds a
		// seat there): one room fewer taken from a small pool.
		var port uint16
		var s *conformance.UDPSocket
		shared := uint32(0)
		if rs, err := replies(ft); err == nil && rs.joinOK != nil && rs.joinOK.reply.typ == udpwire.LobbyJoinSuccess {
			if id, jp, ok := rs.joinOK.reply.roomRef(); ok && id == rs.roomID && jp != 0 {
				port, s, shared = jp, rs.joinOK.sock, id
				s.LogTo(ft) // its datagrams now belong to this fixture's log
				ft.Notef("room %d, shared with the lobby requests' fixture", id)
			}
		}
		if s == nil {
			var err error
			if _, port, s, err = createRoom(ft); err != nil {
				return nil, err
			}
		}
		fx := &instFx{port: port}
		p := newPlayer(ft, s, port)
		ft.Env.Cleanup(p.leave)
		hello := []udpwire.MsgType{udpwire.ServerHello, udpwire.ServerJoinAccept, udpwire.ServerJoinDeny, udpwire.ServerPong}
		fx.hello.call(p, udpwire.ClientHello, hello...)
		if shared != 0 && errors.Is(fx.hello.err, conformance.ErrSilence) {
			p = freshInstance(ft, fx, shared, p, hello)
		}
		do := func(c *instCall, typ udpwire.MsgType, want ...udpwire.MsgType) { c.call(p, typ, want...) }
		if err := ft.Sleep(50 * time.Millisecond); err != nil {
			return nil, err
		}
		do(&fx.hello2, udpwire.ClientHello, hello...)
		do(&fx.join, udpwire.ClientJoinRequest, hello...)
		do(&fx.pong, udpwire.ClientPing, hello...)
		return fx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*instFx), nil
}

// instRoomOutlivesInstance empties a room through the handshake (join,
// then CLIENT_DISCONNECT) and checks the list and the port agree.
func instRoomOutlivesInstance(t *conformance.T) error {
	id, port, s, err := createRoom(t)
	if err != nil {
		return err
	}
	p := newPlayer(t, s, port)
	typ, err := p.handshake()
	p.leave()
	if err != nil || typ != udpwire.ServerJoinAccept {
		why := joinRefusal(err, typ)
		return conformance.SkipFor(why, "could not join the instance of room %d: %v", id, why)
	}
	rooms, err := listRooms(t)
	if err != nil {
		return err
	}
	r, listed := findRoom(rooms, id)
	if !listed {
		t.Notef("room %d left the list once its last player left", id)
		return nil
	}
	s2, err := t.OpenUDP()
	if err != nil {
		return err
	}
	q := newPlayer(t, s2, port)
	defer s2.Close()
	m, _, err := q.call(udpwire.ClientHello, udpwire.ServerHello, udpwire.ServerJoinAccept, udpwire.ServerJoinDeny, udpwire.ServerPong)
	if errors.Is(err, conformance.ErrSilence) {
		return conformance.Warnf(fmt.Sprintf("room %d gone from the list once its instance stopped answering", id),
			"room %d is still listed (%v, %d of %d players, port %d) after its last player left, but port %d no longer answers CLIENT_HELLO (twice)%s: the lobby sends joiners to a dead instance",
			id, r.State, r.Players, r.MaxPlayers, r.Port, port, conformance.SilenceDetail(err))
	}
	if err != nil {
		return err
	}
	t.Notef("room %d is still listed after its last player left, and its instance answers (%v)", id, m.typ)
	return nil
}
