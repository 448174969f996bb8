package tcpwire

import (
	"strings"
	"testing"
)

func TestSalvage(t *testing.T) {
	full := func(m Message) []byte { return m.AppendPayload(nil) }
	joinOK := full(&JoinRoomAck{Status: JoinSuccess, PlayerHash: 7, Count: 2,
		Players: [MaxPlayers]PlayerInfo{{Number: 1, Hash: 7, Name: MakeName("a")}, {Number: 2, Hash: 8, Name: MakeName("b")}}})
	for _, tt := range []struct {
		name string
		p    []byte
		ok   bool
		want Message // compared field by field through AppendPayload
		note string
	}{
		{"6-byte CREATE_ROOM_ACK", []byte{0x04, 0x00, 0x2A, 0, 0, 0}, true, &CreateRoomAck{RoomID: 42}, "Status 0x00, RoomID 42"},
		{"5-byte CREATE_ROOM_ACK", []byte{0x04, 0x2A, 0, 0, 0}, true, &CreateRoomAck{RoomID: 42}, "no PlayerHash"},
		{"CREATE_ROOM_ACK too short", []byte{0x04, 0x2A}, false, nil, ""},
		{"2-byte JOIN_ROOM_ACK", []byte{0x06, 0x00}, true, &JoinRoomAck{Status: JoinSuccess}, "no PlayerHash"},
		{"2-byte JOIN_ROOM_ACK full", []byte{0x06, 0x01}, true, &JoinRoomAck{Status: JoinRoomFull}, "Status"},
		{"JOIN_ROOM_ACK cut in its second player", joinOK[:len(joinOK)-5], true,
			&JoinRoomAck{Status: JoinSuccess, PlayerHash: 7, Count: 1, Players: [MaxPlayers]PlayerInfo{{Number: 1, Hash: 7, Name: MakeName("a")}}}, "1 whole player"},
		{"1-byte CONNECT_ACK", []byte{0x11}, false, nil, ""},
		{"2-byte CONNECT_ACK", []byte{0x11, 0x01}, true, &ConnectAck{Success: true}, "no PlayerHash"},
		{"bool 2 read leniently", []byte{0x11, 0x02, 1, 0, 0, 0, 0, 0, 0, 0}, true, &ConnectAck{Success: true, PlayerHash: 1}, "leniently"},
		{"COUNTDOWN with a trailing byte", []byte{0x19, 3, 0}, true, &Countdown{Seconds: 3}, "Seconds"},
		{"PLAYER_READY without its bool", []byte{0x14, 9, 0, 0, 0, 0, 0, 0, 0}, true, &PlayerReady{PlayerHash: 9, Ready: true}, "PlayerHash"},
		{"unknown type", []byte{0xEE, 1, 2}, false, nil, ""},
		{"empty", nil, false, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, note, ok := Salvage(tt.p)
			if ok != tt.ok {
				t.Fatalf("Salvage(% x) ok = %v, want %v", tt.p, ok, tt.ok)
			}
			if !ok {
				return
			}
			if m.Type() != Type(tt.p[0]) {
				t.Errorf("type %v, want %v", m.Type(), Type(tt.p[0]))
			}
			if got, want := full(m), full(tt.want); string(got) != string(want) {
				t.Errorf("read % x, want % x", got, want)
			}
			if !strings.Contains(note, tt.note) {
				t.Errorf("note %q lacks %q", note, tt.note)
			}
		})
	}
}

// FuzzSalvage: Salvage never panics, and what it reads is of the
// payload's own type.
func FuzzSalvage(f *testing.F) {
	f.Add([]byte{0x04, 0x00, 0x2A, 0, 0, 0})
	f.Add([]byte{0x06, 0x00})
	f.Add([]byte{0x02, 3, 1})
	f.Fuzz(func(t *testing.T, p []byte) {
		m, _, ok := Salvage(p)
		if ok && m.Type() != Type(p[0]) {
			t.Fatalf("Salvage(% x) read a %v", p, m.Type())
		}
	})
}
