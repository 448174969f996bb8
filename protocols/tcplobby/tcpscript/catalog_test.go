package tcpscript_test

import (
	"bytes"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/script"
)

var cat = tcpscript.Catalog

func room(id uint64, name string) map[string]any {
	return map[string]any{"id": id, "name": name, "playerCount": uint64(2), "maxPlayers": uint64(4), "inGame": true}
}

func player(n, hash uint64, name string, ready bool) map[string]any {
	return map[string]any{"number": n, "hash": hash, "name": name, "ready": ready}
}

// sends are one send of every message, with every field not zero where
// it can be.
var sends = map[string]map[string]any{
	"LIST_ROOMS_REQ":  {},
	"LIST_ROOMS_ACK":  {"rooms": []map[string]any{room(3, "r3"), room(9, "a room")}},
	"CREATE_ROOM_REQ": {"roomName": "MyRoom", "playerName": "Player1"},
	"CREATE_ROOM_ACK": {"roomId": uint64(3), "playerHash": uint64(1 << 60)},
	"JOIN_ROOM_REQ":   {"roomId": uint64(0xfffffffe), "playerName": "bob"},
	"JOIN_ROOM_ACK": {"status": uint64(0), "playerHash": uint64(0x12345678),
		"players": []map[string]any{player(1, 5, "a", true), player(2, 0x12345678, "b", false)}},
	"ROOM_UPDATE":  {"players": []map[string]any{player(4, 8, "d", true)}},
	"CONNECT_REQ":  {"playerName": "0123456789012345678901234567890"},
	"CONNECT_ACK":  {"success": true, "playerHash": uint64(7)},
	"PLAYER_JOIN":  player(3, 11, "carol", false),
	"READY_REQ":    {},
	"PLAYER_READY": {"playerHash": uint64(11), "ready": true},
	"START_REQ":    {},
	"GAME_START": {"serverIp": "127.0.0.1", "udpPort": uint64(7778),
		"players":        []map[string]any{player(1, 5, "a", true), player(2, 6, "b", true)},
		"spawnPositions": bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, 8)}, // 1.0 eight times
	"DISCONNECT":  {},
	"PLAYER_LEFT": {"playerHash": uint64(6)},
	"COUNTDOWN":   {"secondsRemaining": uint64(3)},
	"ERROR_MSG":   {"errorCode": uint64(4), "message": "Not all players ready ✓"},
}

// TestRoundTrip: every message sent with its fields decodes, without a
// violation, to those fields, and what it decodes to encodes again to
// the same bytes.
func TestRoundTrip(t *testing.T) {
	msgs := cat.Messages()
	if len(msgs) != len(tcpwire.Types) {
		t.Fatalf("%d messages, want the %d types of §2.3", len(msgs), len(tcpwire.Types))
	}
	for _, m := range msgs {
		t.Run(m.Name, func(t *testing.T) {
			in, ok := sends[m.Name]
			if !ok {
				t.Fatalf("no send of %s in the table", m.Name)
			}
			p, err := cat.Encode(cat.NewSession(nil), m.Name, in)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := tcpwire.Type(p[0]).FixedSize(); want != 0 && len(p) != want {
				t.Errorf("%d bytes, want %d", len(p), want)
			}
			d := cat.Decode(cat.NewSession(nil), "", p)
			if d.Name != m.Name || len(d.Violations) != 0 {
				t.Fatalf("decoded as %q with %v", d.Name, d.Violations)
			}
			for k, v := range in {
				if got := d.Fields[k]; !reflect.DeepEqual(got, v) && !(k == "players" && m.Name == "GAME_START") {
					t.Errorf("field %s = %#v, sent %#v", k, got, v)
				}
			}
			again, err := cat.Encode(nil, m.Name, d.Fields)
			if err != nil || !bytes.Equal(again, p) {
				t.Errorf("re-encoded %x (%v), first %x", again, err, p)
			}
		})
	}
}

// TestAutoCounts: a count left out is the list's length; given, it is
// sent as given with the listed entries only, and the frame is broken
// as the script asked.
func TestAutoCounts(t *testing.T) {
	tests := []struct {
		name     string
		fields   map[string]any
		field    string
		want     uint64
		wantRule string
	}{
		{"LIST_ROOMS_ACK", sends["LIST_ROOMS_ACK"], "roomCount", 2, ""},
		{"LIST_ROOMS_ACK", map[string]any{"roomCount": uint64(3), "rooms": []map[string]any{room(1, "x")}}, "", 0, tcpwire.RuleSizeCount},
		{"LIST_ROOMS_ACK", map[string]any{"roomCount": uint64(17)}, "", 0, tcpwire.RuleCountRooms},
		{"JOIN_ROOM_ACK", sends["JOIN_ROOM_ACK"], "playerCount", 2, ""},
		{"ROOM_UPDATE", map[string]any{"playerCount": uint64(0), "players": []map[string]any{player(1, 2, "p", true)}}, "", 0, tcpwire.RuleSizeCount},
		{"GAME_START", sends["GAME_START"], "playerCount", 2, ""},
		{"GAME_START", map[string]any{"playerCount": uint64(5)}, "", 0, tcpwire.RuleCountPlayers},
	}
	for _, tc := range tests {
		p, err := cat.Encode(nil, tc.name, tc.fields)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		d := cat.Decode(nil, "", p)
		if tc.wantRule != "" {
			if len(d.Violations) != 1 || d.Violations[0].Rule != tc.wantRule {
				t.Errorf("%s %v: violations %v, want %s", tc.name, tc.fields, d.Violations, tc.wantRule)
			}
			continue
		}
		if got := d.Fields[tc.field]; got != tc.want {
			t.Errorf("%s: %s = %v, want %d", tc.name, tc.field, got, tc.want)
		}
	}
}

// TestEncodeRefuses: what the loader should have caught is still an
// error naming the field, never a panic or a silent cut.
func TestEncodeRefuses(t *testing.T) {
	tests := []struct {
		name    string
		fields  map[string]any
		wantErr string
	}{
		{"NO_SUCH", nil, `no message "NO_SUCH"`},
		{"CONNECT_REQ", map[string]any{"name": "x"}, `no field "name"`},
		{"CONNECT_REQ", map[string]any{"playerName": strings.Repeat("x", 33)}, "playerName: 33 bytes, at most 32"},
		{"COUNTDOWN", map[string]any{"secondsRemaining": uint64(256)}, "secondsRemaining: 256 does not fit in 8 bits"},
		{"COUNTDOWN", map[string]any{"secondsRemaining": -1}, "secondsRemaining: want a non-negative integer"},
		{"CONNECT_ACK", map[string]any{"success": uint64(1)}, "success: want true or false"},
		{"ROOM_UPDATE", map[string]any{"players": make([]map[string]any, 5)}, "players: 5 entries, at most 4"},
		{"ROOM_UPDATE", map[string]any{"players": []map[string]any{{"hash": "x"}}}, "players[0].hash: want a non-negative integer"},
		{"GAME_START", map[string]any{"spawnPositions": make([]byte, 33)}, "spawnPositions: 33 bytes, at most 32"},
	}
	for _, tc := range tests {
		_, err := cat.Encode(nil, tc.name, tc.fields)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s %v: error %v, want one saying %q", tc.name, tc.fields, err, tc.wantErr)
		}
	}
}

// TestUnterminatedOnPurpose: a text of the field's full size is sent
// with no NUL, and the decoder reports it.
func TestUnterminatedOnPurpose(t *testing.T) {
	p, err := cat.Encode(nil, "CONNECT_REQ", map[string]any{"playerName": strings.Repeat("n", 32)})
	if err != nil {
		t.Fatal(err)
	}
	d := cat.Decode(nil, "", p)
	if len(d.Violations) != 1 || d.Violations[0].Rule != tcpwire.RuleStringUnterminated {
		t.Errorf("violations %v, want %s", d.Violations, tcpwire.RuleStringUnterminated)
	}
}

// TestMalformed: a broken payload decodes with its rule's violation and
// the fields tcpwire.Salvage can still read.
func TestMalformed(t *testing.T) {
	hash := []byte{7, 0, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name       string
		p          []byte
		wantName   string
		wantRule   string
		wantFields map[string]any // nil: none readable
	}{
		{"empty", nil, "", tcpwire.RuleFrameEmpty, nil},
		{"unknown type", []byte{0x42}, "", tcpwire.RuleTypeUnknown, nil},
		{"LIST_ROOMS_REQ of 2 bytes", []byte{0x01, 0}, "LIST_ROOMS_REQ", tcpwire.RuleSizeFixed, nil},
		{"ERROR_MSG of 1 byte", []byte{0x1f}, "ERROR_MSG", tcpwire.RuleSizeError, nil},
		{"bool 2", append([]byte{0x11, 2}, hash...), "CONNECT_ACK", tcpwire.RuleBool,
			map[string]any{"success": true, "playerHash": uint64(7)}},
		{"6-byte CREATE_ROOM_ACK", []byte{0x04, 0, 3, 0, 0, 0}, "CREATE_ROOM_ACK", tcpwire.RuleSizeFixed,
			map[string]any{"roomId": uint64(3), "playerHash": uint64(0)}},
		{"join status 9", append(append([]byte{0x06, 9}, hash...), 0), "JOIN_ROOM_ACK", tcpwire.RuleJoinStatus,
			map[string]any{"status": uint64(9), "playerHash": uint64(7), "playerCount": uint64(0), "players": []map[string]any{}}},
		{"error text not UTF-8", []byte{0x1f, 6, 0xff}, "ERROR_MSG", tcpwire.RuleErrorText,
			map[string]any{"errorCode": uint64(6), "message": "\xff"}},
		{"slot 0", append([]byte{0x12, 0}, make([]byte, 41)...), "PLAYER_JOIN", tcpwire.RulePlayerNumber,
			map[string]any{"number": uint64(0), "hash": uint64(0), "name": "", "ready": false}},
	}
	for _, tc := range tests {
		d := cat.Decode(cat.NewSession(nil), "", tc.p)
		if d.Name != tc.wantName || len(d.Violations) != 1 || d.Violations[0].Rule != tc.wantRule {
			t.Errorf("%s: %q %v, want %q with %s", tc.name, d.Name, d.Violations, tc.wantName, tc.wantRule)
		}
		if !reflect.DeepEqual(d.Fields, tc.wantFields) {
			t.Errorf("%s: fields %#v, want %#v", tc.name, d.Fields, tc.wantFields)
		}
	}
}

// TestRoute: GAME_START routes to the instance it names.
func TestRoute(t *testing.T) {
	tests := []struct {
		ip   string
		port uint64
		want *script.Route
	}{
		{"127.0.0.2", 7778, &script.Route{Channel: "instance", Addr: netip.MustParseAddrPort("127.0.0.2:7778"), Port: 7778}},
		{"0.0.0.0", 4000, &script.Route{Channel: "instance", Port: 4000}},
		{"127.0.0.1", 0, nil},
		{"lobby.local", 4000, nil},
	}
	for _, tc := range tests {
		p, err := cat.Encode(nil, "GAME_START", map[string]any{"serverIp": tc.ip, "udpPort": tc.port})
		if err != nil {
			t.Fatal(err)
		}
		if got := cat.Decode(nil, "", p).Route; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:%d: route %+v, want %+v", tc.ip, tc.port, got, tc.want)
		}
	}
	if r := cat.Decode(nil, "", []byte{0x19, 3}).Route; r != nil {
		t.Errorf("COUNTDOWN routes to %+v", r)
	}
}

// TestFrame: Frame prefixes the payload's length, as tcpwire frames.
func TestFrame(t *testing.T) {
	m := &tcpwire.CreateRoomAck{RoomID: 3, PlayerHash: 9}
	if got, want := tcpscript.Frame(tcpwire.Marshal(m)), tcpwire.AppendFrame(nil, m); !bytes.Equal(got, want) {
		t.Errorf("Frame = %x, want %x", got, want)
	}
}

func FuzzDecode(f *testing.F) {
	for name, fields := range sends {
		p, err := cat.Encode(nil, name, fields)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Add([]byte{0x04, 0, 3, 0, 0, 0})
	f.Add([]byte{0x06, 9})
	f.Fuzz(func(t *testing.T, p []byte) {
		d := cat.Decode(cat.NewSession(nil), "", p)
		if len(d.Violations) == 0 {
			if d.Name == "" {
				t.Fatalf("%x decoded clean with no name", p)
			}
			again, err := cat.Encode(nil, d.Name, d.Fields)
			if err != nil {
				t.Fatalf("%x decoded to fields that do not encode: %v", p, err)
			}
			// Not the same bytes: padding after a NUL is not kept.
			if d2 := cat.Decode(nil, "", again); len(d2.Violations) != 0 || !reflect.DeepEqual(d2.Fields, d.Fields) {
				t.Fatalf("%x decoded to %v, re-encoded %x decodes to %v %v", p, d.Fields, again, d2.Fields, d2.Violations)
			}
		}
	})
}
