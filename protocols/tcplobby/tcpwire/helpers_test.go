package tcpwire

import (
	"encoding/hex"
	"strings"
)

// player returns an occupied PlayerInfo for slot n.
func player(n uint8, name string, ready bool) PlayerInfo {
	return PlayerInfo{Number: n, Hash: 0x1111111111111111 * uint64(n), Name: MakeName(name), Ready: ready}
}

func room(id uint32, name string, count uint8, inGame bool) RoomInfo {
	return RoomInfo{ID: id, Name: MakeName(name), PlayerCount: count, MaxPlayers: 4, InGame: inGame}
}

// sample is one representative message per golden file.
type sample struct {
	name string
	msg  Message
	// appendixA is the size Appendix A gives, computed here from the seed's
	// table (not from the package constants) so that a wrong constant fails.
	appendixA int
}

func samples() []sample {
	full := &ListRoomsAck{Count: 16}
	for i := range full.Rooms {
		full.Rooms[i] = room(uint32(i+1), "room-"+string(rune('a'+i)), uint8(i%5), i%3 == 0)
	}
	gs := &GameStart{ServerIP: MakeIP("127.0.0.1"), UDPPort: 7778, PlayerCount: 2}
	gs.Players[0] = player(1, "Alice", true)
	gs.Players[1] = player(2, "Bob", true)
	gs.Spawn = [4][2]float32{{100, 200}, {100, 400}, {0, 0}, {0, 0}}
	jra := &JoinRoomAck{Status: JoinSuccess, PlayerHash: 0x12345678, Count: 2}
	jra.Players[0] = player(1, "Player1", false)
	jra.Players[1] = player(2, "Player2", false)
	ru := &RoomUpdate{Count: 3}
	ru.Players[0] = player(1, "Alice", true)
	ru.Players[1] = player(2, "Bob", false)
	ru.Players[2] = player(3, "Zoë", true)
	return []sample{
		{"list_rooms_req", &ListRoomsReq{}, 1},
		{"list_rooms_ack_empty", &ListRoomsAck{}, 2},
		{"list_rooms_ack_2", &ListRoomsAck{Count: 2, Rooms: [16]RoomInfo{room(1, "MyRoom", 1, false), room(7, "Arena", 4, true)}}, 2 + 2*39},
		{"list_rooms_ack_16", full, 2 + 16*39},
		{"create_room_req", &CreateRoomReq{RoomName: MakeName("MyRoom"), PlayerName: MakeName("Player1")}, 65},
		{"create_room_ack", &CreateRoomAck{RoomID: 42, PlayerHash: 0xDEADBEEFCAFEF00D}, 13},
		{"create_room_ack_full", &CreateRoomAck{RoomID: 0, PlayerHash: 0}, 13},
		{"join_room_req", &JoinRoomReq{RoomID: 42, PlayerName: MakeName("Player2")}, 37},
		{"join_room_ack_2", jra, 11 + 2*42},
		{"join_room_ack_full", &JoinRoomAck{Status: JoinRoomFull}, 11},
		{"room_update_3", ru, 2 + 3*42},
		{"connect_req", &ConnectReq{PlayerName: MakeName("Player1")}, 33},
		{"connect_ack", &ConnectAck{Success: true, PlayerHash: 0x0102030405060708}, 10},
		{"player_join", &PlayerJoin{Player: player(2, "Bob", false)}, 43},
		{"ready_req", &ReadyReq{}, 1},
		{"player_ready", &PlayerReady{PlayerHash: 0x2222222222222222, Ready: true}, 10},
		{"start_req", &StartReq{}, 1},
		{"game_start", gs, 220},
		{"disconnect", &Disconnect{}, 1},
		{"player_left", &PlayerLeft{PlayerHash: 0x2222222222222222}, 9},
		{"countdown", &Countdown{Seconds: 3}, 2},
		{"error_msg", NewErrorMsg(ErrCodeNotHost, "not host"), 2 + len("not host")},
		{"error_msg_empty", &ErrorMsg{Code: ErrCodeServerError}, 2},
	}
}

// unhex parses hex with arbitrary whitespace and '#' comments to end of line.
func unhex(s string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		b.WriteString(strings.Join(strings.Fields(line), ""))
	}
	out, err := hex.DecodeString(b.String())
	if err != nil {
		panic(err)
	}
	return out
}

// dump formats b as 16 hex bytes per line (the golden file format).
func dump(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		end := min(i+16, len(b))
		for j := i; j < end; j++ {
			if j > i {
				sb.WriteByte(' ')
			}
			sb.WriteString(hex.EncodeToString(b[j : j+1]))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
