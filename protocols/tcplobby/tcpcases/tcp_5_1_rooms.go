package tcpcases

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §5.1 Room management.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/1", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleCountRooms, Level: conformance.Must,
		Owns:        []string{"LIST_ROOMS_ACK"},
		Desc:        "LIST_ROOMS_REQ is answered with LIST_ROOMS_ACK: RoomCount (0-16) then RoomCount × 39-byte RoomInfo",
		Requirement: "LIST_ROOMS_ACK (0x02): Type 1 byte | RoomCount 1 byte | Rooms[] RoomCount * 39 bytes … RoomCount uint8_t Number of rooms (0-16)",
		Run:         runTCP5_1_1,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/2", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleSizeFixed, Level: conformance.Must,
		Owns:        []string{"CREATE_ROOM_ACK"},
		Desc:        "CREATE_ROOM_REQ (65 bytes) is answered with CREATE_ROOM_ACK of 13 bytes, RoomID ≠ 0, PlayerHash ≠ 0",
		Requirement: "CREATE_ROOM_ACK (0x04): Type 1 byte | RoomID 4 bytes | PlayerHash 8 bytes, Total: 13 bytes; RoomID uint32_t Assigned room ID (0 = failed)",
		Run:         runTCP5_1_2,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/3", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleSizeCount, Level: conformance.Must,
		Owns:        []string{"JOIN_ROOM_ACK"},
		Desc:        "JOIN_ROOM_REQ of an open room is answered SUCCESS with a non-zero hash and every player, the joiner included",
		Requirement: "JOIN_ROOM_ACK (0x06): Status | PlayerHash | PlayerCount | Players[] PlayerCount * 42B; 0x00 SUCCESS Join successful",
		Run:         runTCP5_1_3,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/4", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleJoinStatus, Level: conformance.Must,
		Desc:        "JOIN_ROOM_REQ of a missing room is answered with status ROOM_NOT_FOUND (0x02)",
		Requirement: "0x02 ROOM_NOT_FOUND Room ID does not exist",
		Run:         runTCP5_1_4,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/5", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleJoinStatus, Level: conformance.Must,
		Desc:        "JOIN_ROOM_REQ of a full room (4 players) is answered with status ROOM_FULL (0x01)",
		Requirement: "0x01 ROOM_FULL Room has maximum players",
		Run:         runTCP5_1_5,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/6", Protocol: ProtoTCP, Section: secTCPRoom, Rule: tcpwire.RuleJoinStatus, Level: conformance.Must,
		Desc:        "JOIN_ROOM_REQ of a room whose game started is answered with status ROOM_IN_GAME (0x03)",
		Requirement: "0x03 ROOM_IN_GAME Room game already started",
		Run:         runTCP5_1_6,
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/5.1/7", Protocol: ProtoTCP, Section: secTCPRoom, Level: conformance.Must, Phase: conformance.PhasePool,
		Desc:        "CREATE_ROOM_REQ when 16 rooms exist is answered with CREATE_ROOM_ACK RoomID 0",
		Requirement: "MAX_ROOMS = 16; RoomID uint32_t Assigned room ID (0 = failed); CREATE_ROOM when 16 rooms exist: CREATE_ROOM_ACK with RoomID 0 (tcp-lobby.md §5.1)",
		Run:         tcpSeventeenthRoom,
	})
}

func runTCP5_1_1(t *conformance.T) error {
	c, err := dialTCP(t)
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
	if p, err = tcpExpect(p, err, "LIST_ROOMS_ACK"); err != nil {
		return err
	}
	var m tcpwire.ListRoomsAck
	if err := m.DecodeOpts(p, tcpwire.Options{}); err != nil {
		return conformance.Fail("a LIST_ROOMS_ACK of 2 + 39 × RoomCount bytes, RoomCount ≤ 16, valid RoomInfo", err.Error())
	}
	t.Notef("%d rooms", m.Count)
	return nil
}

func runTCP5_1_2(t *conformance.T) error {
	// Its own exchange, so that a malformed ACK fails here with its
	// bytes whatever the shared fixtures make of it.
	c, err := dialTCP(t)
	if err != nil {
		return err
	}
	defer c.Close()
	req := &tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("room-" + c.name), PlayerName: tcpwire.MakeName(c.name)}
	p, err := c.request(req, tcpwire.TypeCreateRoomAck)
	if p, err = tcpExpect(p, err, "CREATE_ROOM_ACK"); err != nil {
		return err
	}
	defer c.send(&tcpwire.Disconnect{}, "DISCONNECT (cleanup)")
	var m tcpwire.CreateRoomAck
	if err := m.DecodeOpts(p, tcpwire.Options{}); err != nil {
		return conformance.Failf("a CREATE_ROOM_ACK of 13 bytes", "%d bytes (%s): %v", len(p), conformance.HexShort(p), err)
	}
	if m.RoomID == 0 {
		return conformance.Skipf("CREATE_ROOM_ACK RoomID 0: the server has no free room (%s)", conformance.HexShort(p))
	}
	if m.PlayerHash == 0 {
		return conformance.Fail("a non-zero PlayerHash", "PlayerHash 0")
	}
	return nil
}

func runTCP5_1_3(t *conformance.T) error {
	g, err := tcpGameFx(t)
	if err != nil {
		return err
	}
	var bad []string
	for i, p := range g.joins {
		var m tcpwire.JoinRoomAck
		if err := m.DecodeOpts(p, tcpwire.Options{}); err != nil {
			bad = append(bad, fmt.Sprintf("player %d: %d bytes (%s): %v", i+2, len(p), conformance.HexShort(p), err))
			continue
		}
		if m.PlayerHash == 0 {
			bad = append(bad, fmt.Sprintf("player %d: PlayerHash 0", i+2))
		}
		if int(m.Count) != i+2 {
			bad = append(bad, fmt.Sprintf("player %d: PlayerCount %d, want %d (the joiner included)", i+2, m.Count, i+2))
		}
		found := false
		for _, pi := range m.Players[:min(int(m.Count), tcpwire.MaxPlayers)] {
			found = found || pi.Hash == m.PlayerHash
		}
		if !found && m.PlayerHash != 0 {
			bad = append(bad, fmt.Sprintf("player %d: its own hash is not among the players", i+2))
		}
	}
	if len(bad) > 0 {
		return conformance.Fail("JOIN_ROOM_ACK SUCCESS with 11 + 42 × PlayerCount bytes listing every player", strings.Join(bad, "; "))
	}
	return nil
}

func runTCP5_1_4(t *conformance.T) error {
	c, err := dialTCP(t)
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := c.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
	if p, err = tcpExpect(p, err, "LIST_ROOMS_ACK"); err != nil {
		return conformance.Precondition("list rooms", err)
	}
	var l tcpwire.ListRoomsAck
	if decodeAs(p, &l) != nil {
		return conformance.Owned(ProtoTCP, "LIST_ROOMS_ACK", conformance.Skipf("the room list does not decode"))
	}
	id := uint32(0x7FFFFFF1)
	for taken := true; taken; {
		taken = false
		for _, r := range l.Rooms[:l.Count] {
			if r.ID == id {
				taken, id = true, id-1
			}
		}
	}
	return joinStatus(c, id, tcpwire.JoinRoomNotFound, "a missing room")
}

func runTCP5_1_5(t *conformance.T) error {
	g, err := tcpGameFx(t)
	if err != nil {
		return err
	}
	return judgeJoin(t, g.fullJoin, g.fullErr, tcpwire.JoinRoomFull, "the full room")
}

func runTCP5_1_6(t *conformance.T) error {
	g, err := tcpGameFx(t)
	if err != nil {
		return err
	}
	if !g.started[0] {
		return conformance.Owned(ProtoTCP, "GAME_START", conformance.Skipf("the game never started"))
	}
	return judgeJoin(t, g.inGame, g.inGameErr, tcpwire.JoinRoomInGame, "the room in game")
}

func joinStatus(c *tcpClient, id uint32, want tcpwire.JoinStatus, what string) error {
	_, p, err := c.join(id)
	return judgeJoin(c.t, p, err, want, what)
}

func judgeJoin(t *conformance.T, p []byte, err error, want tcpwire.JoinStatus, what string) error {
	if err != nil {
		var ve *conformance.VerifyError
		if errors.As(err, &ve) && p == nil {
			return conformance.Failf(fmt.Sprintf("JOIN_ROOM_ACK %v for %s", want, what), "%s", ve.Actual)
		}
		if p == nil {
			return err
		}
	}
	if len(p) < 2 {
		return conformance.Failf(fmt.Sprintf("JOIN_ROOM_ACK %v for %s", want, what), "payload %s", conformance.HexShort(p))
	}
	if got := tcpwire.JoinStatus(p[1]); got != want {
		return conformance.Failf(fmt.Sprintf("JOIN_ROOM_ACK %v for %s", want, what), "status %v", got)
	}
	var m tcpwire.JoinRoomAck
	if err := m.DecodeOpts(p, tcpwire.Options{}); err != nil {
		// The layout is tcp-lobby/A/1's: this case owns the status, which is
		// right.
		t.Notef("the status is right; the ACK's layout is not (%s: %v), which tcp-lobby/A/1 reports", conformance.HexShort(p), err)
	}
	return nil
}

func tcpSeventeenthRoom(t *conformance.T) error {
	existing, err := tcpRoomCount(t)
	if err != nil {
		return err
	}
	var hosts []*tcpClient
	defer func() { releaseTCPRooms(t, hosts, existing) }()
	// Up to MAX_ROOMS+1 creations whatever was listed before: rooms other
	// cases left may still be going away while this one fills the lobby.
	for i := 0; i <= tcpwire.MaxRooms; i++ {
		h, err := dialTCP(t)
		if err != nil {
			return err
		}
		hosts = append(hosts, h)
		ack, err := h.create()
		if err != nil {
			return conformance.Precondition(fmt.Sprintf("create room #%d", i+1), err)
		}
		if ack.RoomID == 0 {
			if existing+i < tcpwire.MaxRooms {
				t.Notef("RoomID 0 with %d rooms: the server's limit is below MAX_ROOMS 16", existing+i)
			} else {
				t.Notef("RoomID 0 once %d rooms existed", existing+i)
			}
			if ack.PlayerHash != 0 {
				t.Notef("PlayerHash %#x with RoomID 0 (failed creation)", ack.PlayerHash)
			}
			return nil
		}
	}
	return conformance.Failf(fmt.Sprintf("CREATE_ROOM_ACK RoomID 0 for room #%d", tcpwire.MaxRooms+1),
		"%d rooms listed before, then %d creations all succeeded", existing, tcpwire.MaxRooms+1)
}

// releaseTCPRooms makes the hosts leave their rooms and waits (bounded)
// until the list is back to existing rooms, so the next case finds free
// rooms.
func releaseTCPRooms(t *conformance.T, hosts []*tcpClient, existing int) {
	for _, h := range hosts {
		h.send(&tcpwire.Disconnect{}, "DISCONNECT (cleanup)")
		h.Close()
	}
	deadline := time.Now().Add(t.Env.Timeout)
	for time.Now().Before(deadline) {
		c, err := dialTCP(t)
		if err != nil {
			return
		}
		p, err := c.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
		c.Close()
		if err != nil || len(p) < 2 || int(p[1]) <= existing {
			return
		}
		t.Sleep(10 * time.Millisecond)
	}
}

// tcpRoomCount returns RoomCount of a fresh LIST_ROOMS_ACK.
func tcpRoomCount(t *conformance.T) (int, error) {
	lc, err := dialTCP(t)
	if err != nil {
		return 0, err
	}
	p, err := lc.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
	lc.Close()
	if p, err = tcpExpect(p, err, "LIST_ROOMS_ACK"); err != nil {
		return 0, conformance.Precondition("list rooms", err)
	}
	if len(p) < 2 {
		return 0, conformance.Owned(ProtoTCP, "LIST_ROOMS_ACK", conformance.Skipf("the room list does not decode"))
	}
	return int(p[1]), nil
}
