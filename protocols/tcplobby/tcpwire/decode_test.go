package tcpwire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

// mutate returns a copy of p with p[i] = b.
func mutate(p []byte, i int, b byte) []byte {
	q := append([]byte(nil), p...)
	q[i] = b
	return q
}

func TestDecodeErrors(t *testing.T) {
	createReq := Marshal(&CreateRoomReq{RoomName: MakeName("r"), PlayerName: MakeName("p")})
	jra := &JoinRoomAck{Count: 1}
	jra.Players[0] = player(1, "p", false)
	joinAck := Marshal(jra)
	gs := &GameStart{ServerIP: MakeIP("10.0.0.1"), UDPPort: 1, PlayerCount: 1}
	gs.Players[0] = player(1, "p", false)
	gameStart := Marshal(gs)
	list := Marshal(&ListRoomsAck{Count: 1, Rooms: [16]RoomInfo{room(1, "r", 1, false)}})
	full32 := strings.Repeat("x", 32)

	tests := []struct {
		name    string
		p       []byte
		rule    string
		lenient bool // true when a lenient decode must succeed
	}{
		{"empty payload", nil, RuleFrameEmpty, false},
		{"unknown type 0x00", []byte{0x00}, RuleTypeUnknown, false},
		{"unknown type 0x08", []byte{0x08}, RuleTypeUnknown, false},
		{"unknown type 0x1A", []byte{0x1A, 0}, RuleTypeUnknown, false},
		{"unknown type 0xFF", []byte{0xFF}, RuleTypeUnknown, false},
		{"LIST_ROOMS_REQ with a trailing byte", []byte{0x01, 0}, RuleSizeFixed, false},
		{"READY_REQ with a trailing byte", []byte{0x13, 0}, RuleSizeFixed, false},
		{"CREATE_ROOM_REQ short by one", createReq[:64], RuleSizeFixed, false},
		{"CREATE_ROOM_REQ long by one", append(append([]byte(nil), createReq...), 0), RuleSizeFixed, false},
		{"CREATE_ROOM_ACK short", []byte{0x04, 1, 0, 0, 0}, RuleSizeFixed, false},
		{"GAME_START 219 bytes", gameStart[:219], RuleSizeFixed, false},
		{"COUNTDOWN 1 byte", []byte{0x19}, RuleSizeFixed, false},
		{"LIST_ROOMS_ACK header only short", []byte{0x02}, RuleSizeCount, false},
		{"LIST_ROOMS_ACK count 1 no entry", []byte{0x02, 1}, RuleSizeCount, false},
		{"LIST_ROOMS_ACK entry padded to 40", append(append([]byte(nil), list...), 0), RuleSizeCount, false},
		{"LIST_ROOMS_ACK count 17", []byte{0x02, 17}, RuleCountRooms, false},
		{"JOIN_ROOM_ACK count 5", mutate(joinAck[:11], 10, 5), RuleCountPlayers, false},
		{"JOIN_ROOM_ACK count 2 one entry", mutate(joinAck, 10, 2), RuleSizeCount, false},
		{"JOIN_ROOM_ACK short header", joinAck[:10], RuleSizeCount, false},
		{"ROOM_UPDATE count 0 with entry", []byte{0x07, 0, 1}, RuleSizeCount, false},
		{"ROOM_UPDATE count 200", []byte{0x07, 200}, RuleCountPlayers, false},
		{"GAME_START count 5", mutate(gameStart, 19, 5), RuleCountPlayers, false},
		{"ERROR_MSG 1 byte", []byte{0x1F}, RuleSizeError, false},
		{"CREATE_ROOM_REQ room name unterminated", append([]byte{0x03}, append([]byte(full32), createReq[33:]...)...), RuleStringUnterminated, true},
		{"CREATE_ROOM_REQ player name unterminated", append(append([]byte(nil), createReq[:33]...), full32...), RuleStringUnterminated, true},
		{"CONNECT_REQ unterminated", append([]byte{0x10}, full32...), RuleStringUnterminated, true},
		{"JOIN_ROOM_REQ unterminated", append([]byte{0x05, 1, 0, 0, 0}, full32...), RuleStringUnterminated, true},
		{"GAME_START IP unterminated", append(append([]byte{0x16}, "0123456789abcdef"...), gameStart[17:]...), RuleStringUnterminated, true},
		{"LIST_ROOMS_ACK room bool 2", mutate(list, 2+38, 2), RuleBool, true},
		{"CONNECT_ACK success 0xFF", []byte{0x11, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0}, RuleBool, true},
		{"PLAYER_READY ready 2", []byte{0x14, 1, 0, 0, 0, 0, 0, 0, 0, 2}, RuleBool, true},
		{"JOIN_ROOM_ACK player ready 7", mutate(joinAck, 11+41, 7), RuleBool, true},
		{"JOIN_ROOM_ACK status 4", mutate(joinAck, 1, 4), RuleJoinStatus, true},
		{"JOIN_ROOM_ACK player number 0", mutate(joinAck, 11, 0), RulePlayerNumber, true},
		{"PLAYER_JOIN player number 5", mutate(Marshal(&PlayerJoin{Player: player(1, "p", false)}), 1, 5), RulePlayerNumber, true},
		{"ROOM_UPDATE player unterminated", func() []byte {
			p := Marshal(&RoomUpdate{Count: 1, Players: [4]PlayerInfo{player(1, "p", false)}})
			copy(p[2+9:], full32)
			return p
		}(), RuleStringUnterminated, true},
		{"GAME_START empty slot bool 9", mutate(gameStart, 20+42*3+41, 9), RuleBool, true},
		{"ERROR_MSG invalid UTF-8", []byte{0x1F, 1, 'a', 0xFF}, RuleErrorText, true},
		{"ERROR_MSG data after NUL", []byte{0x1F, 1, 'a', 0, 'b'}, RuleErrorText, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.p)
			if err == nil {
				t.Fatalf("strict decode of % x succeeded, want %s", tc.p, tc.rule)
			}
			var e *Error
			if !errors.As(err, &e) || e.Rule != tc.rule || RuleOf(err) != tc.rule {
				t.Fatalf("error %v, want rule %s", err, tc.rule)
			}
			if !errors.Is(err, &Error{Rule: tc.rule}) {
				t.Fatalf("errors.Is by rule failed for %v", err)
			}
			if !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("message %q lacks rule id", err)
			}
			_, lerr := DecodeOpts(tc.p, Options{Lenient: true})
			if tc.lenient && lerr != nil {
				t.Fatalf("lenient decode failed: %v", lerr)
			}
			if !tc.lenient && RuleOf(lerr) != tc.rule {
				t.Fatalf("lenient decode: %v, want rule %s", lerr, tc.rule)
			}
		})
	}
}

func TestTypeMismatch(t *testing.T) {
	var m CreateRoomAck
	err := DecodeInto(Marshal(&PlayerLeft{}), &m)
	if RuleOf(err) != RuleTypeMismatch {
		t.Fatalf("got %v, want %s", err, RuleTypeMismatch)
	}
}

func TestPedanticPadding(t *testing.T) {
	p := Marshal(&ConnectReq{PlayerName: MakeName("ab")})
	p[1+5] = 'z' // after "ab\0"
	if err := DecodeInto(p, &ConnectReq{}); err != nil {
		t.Fatalf("strict must accept dirty padding (seed says should): %v", err)
	}
	err := (&ConnectReq{}).DecodeOpts(p, Options{Pedantic: true})
	var e *Error
	if !errors.As(err, &e) || e.Rule != RuleStringPadding || e.Offset != 6 {
		t.Fatalf("pedantic: %v, want %s at offset 6", err, RuleStringPadding)
	}
}

func TestLenientValues(t *testing.T) {
	p := append([]byte{0x10}, strings.Repeat("y", 32)...)
	var m ConnectReq
	if err := m.DecodeOpts(p, Options{Lenient: true}); err != nil {
		t.Fatal(err)
	}
	if m.PlayerName.String() != strings.Repeat("y", 32) || m.PlayerName.Terminated() {
		t.Fatalf("lenient name %q", m.PlayerName)
	}
	var a ConnectAck
	if err := a.DecodeOpts([]byte{0x11, 5, 1, 0, 0, 0, 0, 0, 0, 0}, Options{Lenient: true}); err != nil || !a.Success || a.PlayerHash != 1 {
		t.Fatalf("lenient bool: %v %+v", err, a)
	}
}

func TestErrorMsgReading(t *testing.T) {
	tests := []struct {
		p    []byte
		code ErrorCode
		text string
	}{
		{[]byte{0x1F, 3}, 3, ""},
		{append([]byte{0x1F, 4}, "Not all players ready"...), 4, "Not all players ready"},
		{append([]byte{0x1F, 1}, "Room full\x00"...), 1, "Room full"},         // C-style terminator
		{append([]byte{0x1F, 1}, "Room full\x00\x00\x00"...), 1, "Room full"}, // char[] buffer
		{append([]byte{0x1F, 0x42}, "héllo ✓"...), 0x42, "héllo ✓"},           // uncommon code, UTF-8
	}
	for _, tc := range tests {
		m, err := Decode(tc.p)
		if err != nil {
			t.Fatalf("% x: %v", tc.p, err)
		}
		e := m.(*ErrorMsg)
		if e.Code != tc.code || e.Text != tc.text {
			t.Errorf("% x: got %d %q, want %d %q", tc.p, e.Code, e.Text, tc.code, tc.text)
		}
	}
	long := NewErrorMsg(ErrCodeServerError, strings.Repeat("é", 3000)) // 6000 bytes
	if len(long.Text) > MaxErrorText || !utf8.ValidString(long.Text) || long.Size() > DefaultMaxFrame {
		t.Fatalf("NewErrorMsg: %d bytes, valid %v", len(long.Text), utf8.ValidString(long.Text))
	}
	if got := NewErrorMsg(1, "a\x00b").Text; got != "a" {
		t.Fatalf("NUL not cut: %q", got)
	}
}

func TestMakeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Player1", "Player1"},
		{strings.Repeat("a", 31), strings.Repeat("a", 31)},
		{strings.Repeat("a", 32), strings.Repeat("a", 31)}, // NUL always kept
		{strings.Repeat("a", 100), strings.Repeat("a", 31)},
		{strings.Repeat("a", 30) + "é", strings.Repeat("a", 30)},       // 2-byte rune would end at 32
		{strings.Repeat("a", 29) + "é", strings.Repeat("a", 29) + "é"}, // fits exactly in 31
		{strings.Repeat("a", 29) + "✓", strings.Repeat("a", 29)},       // 3-byte rune split
		{strings.Repeat("a", 28) + "🚀", strings.Repeat("a", 28)},       // 4-byte rune split
		{strings.Repeat("a", 27) + "🚀", strings.Repeat("a", 27) + "🚀"},
		{"ab\x00cd", "ab"},
	}
	for _, tc := range tests {
		n := MakeName(tc.in)
		if got := n.String(); got != tc.want {
			t.Errorf("MakeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if n[NameSize-1] != 0 {
			t.Errorf("MakeName(%q): last byte not NUL", tc.in)
		}
	}
	if ip := MakeIP("255.255.255.255x"); ip.String() != "255.255.255.255" || ip[15] != 0 {
		t.Errorf("MakeIP = %q", ip)
	}
}

func TestTypeString(t *testing.T) {
	if TypeGameStart.String() != "GAME_START" || Type(0x0a).String() != "0x0a" || Type(0xff).String() != "0xff" {
		t.Fatal(TypeGameStart.String(), Type(0x0a).String())
	}
	if JoinRoomInGame.String() != "ROOM_IN_GAME" || JoinStatus(9).String() != "JoinStatus(9)" {
		t.Fatal(JoinStatus(9).String())
	}
}

func TestRulesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if !strings.HasPrefix(r.ID, "T-") || r.Desc == "" || seen[r.ID] {
			t.Errorf("bad rule %+v", r)
		}
		seen[r.ID] = true
	}
	for _, id := range []string{RuleFrameEmpty, RuleFrameTooLarge, RuleFrameTruncated, RuleTypeUnknown,
		RuleTypeMismatch, RuleSizeFixed, RuleSizeCount, RuleSizeError, RuleCountRooms, RuleCountPlayers,
		RuleStringUnterminated, RuleStringPadding, RuleBool, RuleJoinStatus, RulePlayerNumber, RuleErrorText} {
		if !seen[id] {
			t.Errorf("%s missing from Rules", id)
		}
	}
	if len(seen) != 16 {
		t.Errorf("Rules has %d entries, constants 16", len(seen))
	}
}

func TestRuleLevels(t *testing.T) {
	for _, r := range Rules {
		if r.Level != LevelFail && r.Level != LevelWarn {
			t.Errorf("%s: level %q", r.ID, r.Level)
		}
	}
	if r, ok := LookupRule(RuleStringPadding); !ok || r.Level != LevelWarn {
		t.Errorf("padding rule %+v %v", r, ok)
	}
	if r, ok := LookupRule(RuleBool); !ok || r.Level != LevelFail {
		t.Errorf("bool rule %+v %v", r, ok)
	}
	if _, ok := LookupRule("T-NOPE"); ok {
		t.Error("unknown rule found")
	}
}

func TestDecoderReuse(t *testing.T) {
	d := NewDecoder(Options{})
	var ps [][]byte
	for _, s := range samples() {
		ps = append(ps, Marshal(s.msg))
	}
	for i, s := range samples() {
		m, err := d.Decode(ps[i])
		if err != nil || m.Type() != s.msg.Type() || !bytes.Equal(Marshal(m), ps[i]) {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if _, err := d.Decode([]byte{0x55}); RuleOf(err) != RuleTypeUnknown {
		t.Fatalf("unknown: %v", err)
	}
	p := ps[len(ps)-5] // a non-ERROR_MSG frame
	if a := memfig.Allocs(100, func() { _, _ = d.Decode(p) }); a != 0 {
		t.Fatalf("%v allocs", a)
	}
	for _, typ := range Types { // the table holds every type by its id
		if int(typ) >= len(d.msgs) {
			t.Fatalf("type %v (0x%02x) past the Decoder's table of %d", typ, byte(typ), len(d.msgs))
		}
	}
}

// TestEveryDecoderChecksSize calls each type's DecodeOpts directly (not via
// Decode, which checks first) with a payload one byte too long and an empty one.
func TestEveryDecoderChecksSize(t *testing.T) {
	for _, s := range samples() {
		p := append(Marshal(s.msg), 0xEE)
		err := New(s.msg.Type()).DecodeOpts(p, Options{})
		switch RuleOf(err) {
		case RuleSizeFixed, RuleSizeCount:
		default:
			if s.msg.Type() != TypeErrorMsg { // the rest of the frame is text
				t.Errorf("%s: too long: %v", s.name, err)
			}
		}
		if err := New(s.msg.Type()).DecodeOpts(nil, Options{}); RuleOf(err) != RuleFrameEmpty {
			t.Errorf("%s: empty: %v", s.name, err)
		}
	}
}

func TestRuleOfWrapped(t *testing.T) {
	_, err := Decode([]byte{0x42})
	w := fmt.Errorf("conn 7: %w", err)
	if RuleOf(w) != RuleTypeUnknown || RuleOf(errors.New("x")) != "" || RuleOf(nil) != "" {
		t.Fatalf("RuleOf(%v) = %q", w, RuleOf(w))
	}
}
