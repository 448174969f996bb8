package udpscript

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/script"
)

var profiles = []string{"spec", "rtype17"}

func newTestSession(t testing.TB, profile string) any {
	t.Helper()
	return Catalog.NewSession(udpclient.Options{HeaderProfile: profile})
}

// sample is a value for every field name of the catalog, valid in a
// server's reply (roomId and port not 0, state 0-3, players ≤ max).
var sample = map[string]any{
	fSeq: uint64(0xBEEF), fTick: uint64(0xDEADBEEF), fRoomID: uint64(7), fPort: uint64(8089),
	fRoomCount: uint64(2), "clientTime": uint64(0x01020304), "reason": uint64(200),
	"winningPlayerId": uint64(9), "playerId": uint64(11), "secondsLeft": uint64(3),
	fRooms: []map[string]any{
		{fRoomID: uint64(1), fPlayerCount: uint64(2), fMaxPlayers: uint64(4), fPort: uint64(8081), fState: uint64(0)},
		{fRoomID: uint64(0x01000000), fPlayerCount: uint64(4), fMaxPlayers: uint64(4), fPort: uint64(65535), fState: uint64(3)},
	},
}

// sampleFields gives every field of m a sample value (tickId only in the
// rtype17 header, which alone has one), but framing (SendOnly: a send
// sets it on purpose, TestFramingOnPurpose).
func sampleFields(t *testing.T, m script.Message, profile string) map[string]any {
	fields := map[string]any{}
	for _, f := range m.Fields {
		if f.SendOnly {
			continue
		}
		v, ok := sample[f.Name]
		if !ok {
			t.Fatalf("%s: no sample value for field %s", m.Name, f.Name)
		}
		if f.Name != fTick || profile == "rtype17" {
			fields[f.Name] = v
		}
	}
	return fields
}

func TestRoundTrip(t *testing.T) {
	for _, profile := range profiles {
		for _, m := range Catalog.Messages() {
			t.Run(profile+"/"+m.Name, func(t *testing.T) {
				s := newTestSession(t, profile)
				fields := sampleFields(t, m, profile)
				b, err := Catalog.Encode(s, m.Name, fields)
				if err != nil {
					t.Fatal(err)
				}
				d := Catalog.Decode(s, m.Channel, b)
				if d.Name != m.Name || !reflect.DeepEqual(d.Fields, fields) {
					t.Fatalf("decoded %s %v, want %s %v", d.Name, d.Fields, m.Name, fields)
				}
				// A client's message received by a client is carried the
				// wrong way: still read, and named.
				var want []script.Violation
				if m.FromClient {
					want = []script.Violation{{Rule: string(udpwire.RuleDirection)}}
				}
				if got := rulesOf(d.Violations); !reflect.DeepEqual(got, want) {
					t.Fatalf("violations %v, want %v", d.Violations, want)
				}
			})
		}
	}
}

func rulesOf(vs []script.Violation) []script.Violation {
	var out []script.Violation
	for _, v := range vs {
		if v.Detail == "" {
			panic("violation without detail")
		}
		out = append(out, script.Violation{Rule: v.Rule})
	}
	return out
}

// TestSameBytesAsBuiltIn: a scripted request is byte for byte what the
// built-in client's step sends (protocols/udplobby/udpclient/request.go
// encodes with these calls), numbered from 1 by the session's counter.
func TestSameBytesAsBuiltIn(t *testing.T) {
	disconnect := func(dst []byte, p udpwire.Profile, seq uint16) []byte {
		b, _ := udpwire.Append(dst, p, &udpwire.Message{Header: udpwire.Header{Type: udpwire.ClientDisconnect, Seq: seq}, Value: 5})
		return b
	}
	empty := func(typ udpwire.MsgType) func([]byte, udpwire.Profile, uint16) []byte {
		return func(dst []byte, p udpwire.Profile, seq uint16) []byte {
			b, _ := udpwire.AppendEmpty(dst, p, typ, seq)
			return b
		}
	}
	cases := []struct {
		name   string
		fields map[string]any
		want   func([]byte, udpwire.Profile, uint16) []byte
	}{
		{"LOBBY_LIST_ROOMS", nil, udpwire.AppendListRooms},
		{"LOBBY_CREATE_ROOM", nil, udpwire.AppendCreateRoom},
		{"LOBBY_JOIN_ROOM", map[string]any{fRoomID: uint64(42)}, func(dst []byte, p udpwire.Profile, seq uint16) []byte {
			return udpwire.AppendJoinRoom(dst, p, seq, 42)
		}},
		{"CLIENT_HELLO", nil, empty(udpwire.ClientHello)},
		{"CLIENT_JOIN_REQUEST", nil, empty(udpwire.ClientJoinRequest)},
		{"CLIENT_READY", nil, empty(udpwire.ClientReady)},
		{"CLIENT_PING", map[string]any{"clientTime": uint64(123456)}, func(dst []byte, p udpwire.Profile, seq uint16) []byte {
			return udpwire.AppendPing(dst, p, seq, 123456)
		}},
		{"CLIENT_DISCONNECT", map[string]any{"reason": 5}, disconnect},
	}
	for _, profile := range profiles {
		p, _ := udpwire.ParseProfile(profile)
		for _, c := range cases {
			t.Run(profile+"/"+c.name, func(t *testing.T) {
				s := newTestSession(t, profile)
				for seq := uint16(1); seq <= 3; seq++ {
					got, err := Catalog.Encode(s, c.name, c.fields)
					if err != nil {
						t.Fatal(err)
					}
					if want := c.want(nil, p, seq); !bytes.Equal(got, want) {
						t.Fatalf("send %d: % x, the built-in step sends % x", seq, got, want)
					}
				}
			})
		}
	}
}

func TestGivenSequenceIDIsSentAsGiven(t *testing.T) {
	for _, profile := range profiles {
		p, _ := udpwire.ParseProfile(profile)
		s := newTestSession(t, profile)
		for _, c := range []struct {
			given any // nil: not given
			want  uint16
		}{{uint64(0xFFFF), 0xFFFF}, {nil, 1}, {0, 0}, {nil, 2}} {
			fields := map[string]any{}
			if c.given != nil {
				fields[fSeq] = c.given
			}
			b, err := Catalog.Encode(s, "LOBBY_LIST_ROOMS", fields)
			if err != nil {
				t.Fatal(err)
			}
			if h, err := udpwire.DecodeHeader(b, p); err != nil || h.Seq != c.want {
				t.Fatalf("%s: sequenceId given %v: sent %d (%v), want %d", profile, c.given, h.Seq, err, c.want)
			}
		}
	}
}

// TestPingClientTime: a CLIENT_PING not given its clientTime sends the
// microseconds since its series was due (udpclient.ClientTime, what the
// built-in ping step sends), a series being the pings sent with no other
// message between, due at its first ping's intended time
// (script.Scheduled); a given clientTime is sent as given, in the series.
// In a bubble: the sleeps move the clock exactly.
func TestPingClientTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestSession(t, "spec")
		for _, c := range []struct {
			after time.Duration // slept before the send
			late  time.Duration // how long after its intended time it is sent
			msg   string
			given any // nil: not given
			want  uint32
		}{
			{0, 0, "CLIENT_PING", nil, 0},
			{100 * time.Millisecond, 0, "CLIENT_PING", nil, 100_000},
			{50 * time.Millisecond, 0, "CLIENT_PING", uint64(7), 7},
			{time.Millisecond, 5 * time.Millisecond, "CLIENT_PING", nil, 151_000},
			{time.Second, 0, "CLIENT_READY", nil, 0}, // ends the series
			{2 * time.Millisecond, 4 * time.Millisecond, "CLIENT_PING", nil, 4_000},
			{3 * time.Millisecond, 0, "CLIENT_PING", nil, 7_000},
		} {
			time.Sleep(c.after)
			s.(script.Scheduled).Intend(time.Now().Add(-c.late))
			fields := map[string]any{}
			if c.given != nil {
				fields[fClientTime] = c.given
			}
			b, err := Catalog.Encode(s, c.msg, fields)
			if err != nil {
				t.Fatal(err)
			}
			var m udpwire.Message
			if err := (udpwire.Decoder{Profile: udpwire.ProfileSpec}).Decode(b, &m); err != nil {
				t.Fatal(err)
			}
			if c.msg == "CLIENT_PING" && m.Value != c.want {
				t.Errorf("%v later, %v late, clientTime given %v: sent %d, want %d", c.after, c.late, c.given, m.Value, c.want)
			}
		}
	})
}

// TestDecodeViolations: a reply breaking a rule decodes with the rule
// udpwire names, and with what is still readable of it.
func TestDecodeViolations(t *testing.T) {
	enc := func(name string, fields map[string]any) []byte {
		b, err := Catalog.Encode(Catalog.NewSession(nil), name, fields)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	created := enc("LOBBY_ROOM_CREATED", map[string]any{fSeq: 4, fRoomID: 7, fPort: 8089})
	badCRC := slices.Clone(created)
	badCRC[len(badCRC)-1] ^= 1
	badState := enc("LOBBY_ROOM_LIST", map[string]any{fSeq: 5, fRooms: []any{map[string]any{fRoomID: 3, fMaxPlayers: 2, fPort: 9000, fState: 9}}})
	cases := []struct {
		name, channel string
		b             []byte
		wantName      string
		wantRule      udpwire.RuleID
		wantFields    map[string]any
		wantRoute     *script.Route
	}{
		{"valid", "lobby", created, "LOBBY_ROOM_CREATED", "", map[string]any{fSeq: uint64(4), fRoomID: uint64(7), fPort: uint64(8089)},
			&script.Route{Channel: ChannelInstance, Port: 8089}},
		{"crc", "lobby", badCRC, "LOBBY_ROOM_CREATED", udpwire.RuleCRC, map[string]any{fSeq: uint64(4), fRoomID: uint64(7), fPort: uint64(8089)}, nil},
		{"room state", "lobby", badState, "LOBBY_ROOM_LIST", udpwire.RuleRoomState, map[string]any{fSeq: uint64(5), fRoomCount: uint64(1),
			fRooms: []map[string]any{{fRoomID: uint64(3), fPlayerCount: uint64(0), fMaxPlayers: uint64(2), fPort: uint64(9000), fState: uint64(9)}}}, nil},
		{"room count given", "lobby", enc("LOBBY_ROOM_LIST", map[string]any{fSeq: 6, fRoomCount: 3}), "LOBBY_ROOM_LIST", udpwire.RuleRoomListCount, map[string]any{fSeq: uint64(6)}, nil},
		{"instance message on the lobby", "lobby", enc("SERVER_HELLO", map[string]any{fSeq: 8}), "SERVER_HELLO", udpwire.RuleTypeUnknown, map[string]any{fSeq: uint64(8)}, nil},
		{"lobby message on an instance", "instance", created, "LOBBY_ROOM_CREATED", udpwire.RuleInstTypeUnknown, map[string]any{fSeq: uint64(4), fRoomID: uint64(7), fPort: uint64(8089)}, nil},
		{"short", "lobby", created[:5], "", udpwire.RuleShort, nil, nil},
		{"length", "lobby", created[:len(created)-1], "LOBBY_ROOM_CREATED", udpwire.RuleLength, map[string]any{fSeq: uint64(4)}, nil},
		{"unknown type", "", udpwire.AppendRaw(nil, udpwire.ProfileSpec, udpwire.Header{PacketType: udpwire.ServerToClient, Type: 0x99, Seq: 1}, nil), "", udpwire.RuleTypeUnknown, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Catalog.Decode(Catalog.NewSession(nil), c.channel, c.b)
			var want []script.Violation
			if c.wantRule != "" {
				want = []script.Violation{{Rule: string(c.wantRule)}}
			}
			if d.Name != c.wantName || !reflect.DeepEqual(rulesOf(d.Violations), want) {
				t.Fatalf("decoded %q %v, want %q %v", d.Name, d.Violations, c.wantName, want)
			}
			if !reflect.DeepEqual(d.Fields, c.wantFields) || !reflect.DeepEqual(d.Route, c.wantRoute) {
				t.Fatalf("fields %v route %v, want %v %v", d.Fields, d.Route, c.wantFields, c.wantRoute)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name    string
		session any
		msg     string
		fields  map[string]any
	}{
		{"unknown message", Catalog.NewSession(nil), "LOBBY_NOPE", nil},
		{"unknown field", Catalog.NewSession(nil), "LOBBY_JOIN_ROOM", map[string]any{"room": 1}},
		{"out of range", Catalog.NewSession(nil), "CLIENT_DISCONNECT", map[string]any{"reason": 256}},
		{"negative", Catalog.NewSession(nil), "LOBBY_JOIN_ROOM", map[string]any{fRoomID: -1}},
		{"not an integer", Catalog.NewSession(nil), "LOBBY_JOIN_ROOM", map[string]any{fRoomID: "7"}},
		{"tickId in spec", Catalog.NewSession(nil), "LOBBY_LIST_ROOMS", map[string]any{fTick: 1}},
		{"bad room", Catalog.NewSession(nil), "LOBBY_ROOM_LIST", map[string]any{fRooms: []any{1}}},
		{"bad options", Catalog.NewSession("spec"), "LOBBY_LIST_ROOMS", nil},
		{"bad profile", Catalog.NewSession(udpclient.Options{HeaderProfile: "v9"}), "LOBBY_LIST_ROOMS", nil},
		{"no session", nil, "LOBBY_LIST_ROOMS", nil},
	}
	for _, c := range cases {
		if b, err := Catalog.Encode(c.session, c.msg, c.fields); err == nil {
			t.Errorf("%s: encoded % x, want an error", c.name, b)
		}
	}
}

// TestAutoProfile: header_profile auto sends spec until a reply is framed
// under a profile, then that one.
func TestAutoProfile(t *testing.T) {
	s := newTestSession(t, "auto")
	send := func() int {
		b, err := Catalog.Encode(s, "LOBBY_LIST_ROOMS", nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	if n := send(); n != udpwire.ProfileSpec.Overhead() {
		t.Fatalf("unsettled auto sent %d bytes, want the spec header's %d", n, udpwire.ProfileSpec.Overhead())
	}
	Catalog.Decode(s, "lobby", []byte("junk that is framed under no profile"))
	if n := send(); n != udpwire.ProfileSpec.Overhead() {
		t.Fatalf("auto settled on junk: sent %d bytes", n)
	}
	reply, _ := udpwire.AppendRoomList(nil, udpwire.ProfileRType17, 2, nil)
	if d := Catalog.Decode(s, "lobby", reply); d.Name != "LOBBY_ROOM_LIST" || len(d.Violations) != 0 {
		t.Fatalf("rtype17 reply decoded %q %v", d.Name, d.Violations)
	}
	if n := send(); n != udpwire.ProfileRType17.Overhead() {
		t.Fatalf("after an rtype17 reply auto sent %d bytes, want %d", n, udpwire.ProfileRType17.Overhead())
	}
}

// docRow is a message table row of udp-lobby.md (§2, §15): type, name,
// direction.
var docRow = regexp.MustCompile(`(?m)^\| 0x[0-9A-F]{2} \| ([A-Z_]+) \| (client|lobby|instance) → `)

// TestMessagesAreTheDocument's: the catalog's messages are exactly the
// message table rows of udp-lobby.md, with their direction, and every
// field name is a word of the document.
func TestMessagesAreTheDocuments(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocols", "udp-lobby.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	rows := map[string]bool{}
	for _, m := range docRow.FindAllStringSubmatch(doc, -1) {
		rows[m[1]] = m[2] == "client"
	}
	got := map[string]bool{}
	for _, m := range Catalog.Messages() {
		got[m.Name] = m.FromClient
		for _, f := range append(slices.Clone(m.Fields), listElems(m.Fields)...) {
			if !regexp.MustCompile(`\b` + f.Name + `\b`).MatchString(doc) {
				t.Errorf("%s: field %s is not named in udp-lobby.md", m.Name, f.Name)
			}
		}
	}
	if !maps.Equal(got, rows) {
		t.Fatalf("catalog messages (name: from client) %v, udp-lobby.md lists %v", got, rows)
	}
}

func listElems(fs []script.Field) []script.Field {
	var out []script.Field
	for _, f := range fs {
		out = append(out, f.Elem...)
	}
	return out
}

func FuzzDecode(f *testing.F) {
	for _, profile := range profiles {
		for _, m := range Catalog.Messages() {
			b, err := Catalog.Encode(Catalog.NewSession(udpclient.Options{HeaderProfile: profile}), m.Name, nil)
			if err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, profile := range []string{"spec", "rtype17", "auto"} {
			for _, ch := range []string{"", ChannelLobby, ChannelInstance} {
				d := Catalog.Decode(newTestSession(t, profile), ch, b)
				if d.Name == "" && len(d.Violations) == 0 {
					t.Fatalf("%s %q: neither a message nor a violation", profile, ch)
				}
				if d.Route != nil && len(d.Violations) != 0 {
					t.Fatalf("%s %q: a route out of a violating reply", profile, ch)
				}
			}
		}
	})
}

// TestFollowedNames: every message and field the built-in client reads
// from what a script received (udpclient's Follow) is the catalog's, and
// only LOBBY_CREATE_ROOM creates a room.
func TestFollowedNames(t *testing.T) {
	msgs := map[string]script.Message{}
	for _, m := range Catalog.Messages() {
		msgs[m.Name] = m
		if m.CreatesRoom != (m.Name == udpwire.LobbyCreateRoom.String()) {
			t.Errorf("%s: CreatesRoom %v", m.Name, m.CreatesRoom)
		}
	}
	for _, pair := range udpclient.FollowedFields() {
		m, ok := msgs[pair[0]]
		if !ok {
			t.Errorf("no message %s", pair[0])
			continue
		}
		if !slices.ContainsFunc(m.Fields, func(f script.Field) bool { return f.Name == pair[1] }) {
			t.Errorf("%s has no field %s", pair[0], pair[1])
		}
	}
}

// TestFollowSeq: the session goes on after the built-in steps' last
// sequence id, never back (a scripted step resumed after a suspension),
// and a reply to one of the ids it skipped is an earlier request's.
func TestFollowSeq(t *testing.T) {
	s := Catalog.NewSession(nil).(*session)
	s.FollowSeq(7)
	if s.LastSeq() != 7 {
		t.Fatalf("after FollowSeq(7): last %d", s.LastSeq())
	}
	if _, err := Catalog.Encode(s, "LOBBY_LIST_ROOMS", nil); err != nil {
		t.Fatal(err)
	}
	s.FollowSeq(7) // the built-in steps have not followed the script's 8 yet
	if s.LastSeq() != 8 {
		t.Errorf("FollowSeq(7) after the script sent 8: last %d, want 8", s.LastSeq())
	}
	s.FollowSeq(2) // behind 8 (within half the id space): not followed
	if s.LastSeq() != 8 {
		t.Errorf("FollowSeq(2) after 8: last %d, want 8", s.LastSeq())
	}
	s.FollowSeq(8 + 40)
	if s.LastSeq() != 48 {
		t.Errorf("FollowSeq(48) after 8: last %d, want 48", s.LastSeq())
	}
	if !s.sentSeq(47) || !s.sentSeq(9) || s.sentSeq(49) {
		t.Errorf("ids the built-in steps took: 9 known %v, 47 known %v, 49 known %v (want true, true, false)", s.sentSeq(9), s.sentSeq(47), s.sentSeq(49))
	}
}

// TestRenew: a renewed session is the one NewSession makes with the same
// options (its sequence counter at 0, an auto profile unsettled again, no
// id sent or answered), whatever it went through before, and keeps its
// buffers.
func TestRenew(t *testing.T) {
	for profile, replies := range map[string]udpwire.Profile{"spec": udpwire.ProfileSpec, "auto": udpwire.ProfileRType17, "rtype17": udpwire.ProfileRType17} {
		t.Run(profile, func(t *testing.T) {
			s := newTestSession(t, profile).(*session)
			for range 3 {
				if _, err := Catalog.Encode(s, "LOBBY_LIST_ROOMS", nil); err != nil {
					t.Fatal(err)
				}
			}
			s.FollowSeq(40)
			reply, _ := udpwire.AppendRoomList(nil, replies, s.seq, nil)
			if d := Catalog.Decode(s, "lobby", reply); d.Name != "LOBBY_ROOM_LIST" || len(s.builtAnswered) != 1 {
				t.Fatalf("reply %q, %d built-in ids answered", d.Name, len(s.builtAnswered))
			}
			s.Renew()
			fresh := newTestSession(t, profile).(*session)
			if len(s.sent.ids) != 3 || len(s.builtAnswered) != 1 || cap(s.buf) == 0 {
				t.Errorf("renewed: %d ids sent, %d answered, datagram's cap %d: want the socket's 3 and 1 kept, and the buffer", len(s.sent.ids), len(s.builtAnswered), cap(s.buf))
			}
			// The previous client's request answered twice: the second
			// reply comes after the renewal, and is still a second one.
			s.FollowSeq(40)
			if d := Catalog.Decode(s, "lobby", reply); !d.Stale || len(d.Violations) != 1 || d.Violations[0].Rule != udpclient.RuleUReplyDup {
				t.Errorf("a second reply after the renewal: stale %v, violations %v; want stale and %s", d.Stale, d.Violations, udpclient.RuleUReplyDup)
			}
			s.Renew()
			s.sent, s.builtAnswered, s.buf, fresh.sent = sentIDs{}, nil, nil, sentIDs{}
			if !reflect.DeepEqual(s, fresh) {
				t.Errorf("renewed %+v, new %+v", s, fresh)
			}
		})
	}
}

// TestFramingOnPurpose: each framing field a send gives is written as
// given, the rest of the datagram as the message would be (its sequence
// id the session's, the CRC that of what precedes it unless crc is
// given), so that the datagram breaks the one rule of udp-lobby.md §3.4
// the field names, as the lobby's decoder reads it.
func TestFramingOnPurpose(t *testing.T) {
	for _, profile := range profiles {
		prof := udpwire.ProfileSpec
		if profile == "rtype17" {
			prof = udpwire.ProfileRType17
		}
		for _, tc := range []struct {
			name  string
			given map[string]any
			rule  udpwire.RuleID // "": the datagram is well formed
		}{
			{"none", nil, ""},
			{"crc", map[string]any{fCRC: uint64(0)}, udpwire.RuleCRC},
			{"payloadSize", map[string]any{fPayloadSize: uint64(7)}, udpwire.RuleLength},
			{"originalSize", map[string]any{fOriginalSize: uint64(9)}, udpwire.RuleOriginalSize},
			{"packetType server", map[string]any{fPacketType: uint64(2)}, udpwire.RuleDirection},
			{"packetType 7", map[string]any{fPacketType: uint64(7)}, udpwire.RulePacketType},
			{"packetType 0", map[string]any{fPacketType: uint64(0)}, udpwire.RulePacketType},
			{"messageType", map[string]any{fMessageType: uint64(0x7E)}, udpwire.RuleTypeUnknown},
			{"messageType list", map[string]any{fMessageType: uint64(udpwire.LobbyListRooms)}, udpwire.RulePayloadSize},
		} {
			t.Run(profile+"/"+tc.name, func(t *testing.T) {
				s := newTestSession(t, profile)
				fields := map[string]any{fRoomID: uint64(7)}
				maps.Copy(fields, tc.given)
				b, err := Catalog.Encode(s, udpwire.LobbyJoinRoom.String(), fields)
				if err != nil {
					t.Fatal(err)
				}
				var m udpwire.Message
				err = udpwire.Decoder{Profile: prof, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelLobby}.Decode(b, &m)
				if got := udpwire.RuleOf(err); got != tc.rule {
					t.Fatalf("% x: rule %q (%v), want %q", b, got, err, tc.rule)
				}
				if want := prof.PacketLen(4); len(b) != want {
					t.Errorf("% x: %d bytes, want %d (the payload kept)", b, len(b), want)
				}
				var h udpwire.Header
				if err == nil {
					h = m.Header
				} else if e := (*udpwire.Error)(nil); errors.As(err, &e) && e.HaveHeader {
					h = e.Header
				}
				if h.Seq != 1 {
					t.Errorf("% x: sequenceId %d, want the session's first, 1", b, h.Seq)
				}
			})
		}
	}
}

// TestBreakReplies: a datagram broken on purpose takes the session's
// sequence id as any send does, and a reply echoing that id is not an
// answer an expect takes: it is counted against the kind, and its first
// copy breaks the rule the built-in malformed step charges
// (U-MALFORMED-REPLY); a copy of it is skipped, counted neither as a
// reply to the malformed packet nor as a violation again (the step
// counts a packet answered once); the next request's reply is an answer
// as usual.
func TestBreakReplies(t *testing.T) {
	s := newTestSession(t, "spec")
	b, err := Catalog.(script.Breaker).Break(s, udpwire.LobbyListRooms.String(), nil, "bad_crc", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := udpwire.DecodeHeader(b, udpwire.ProfileSpec); udpwire.RuleOf(err) != udpwire.RuleCRC {
		t.Fatalf("% x: %v, want a bad CRC", b, err)
	}
	if _, err := Catalog.Encode(s, udpwire.LobbyListRooms.String(), nil); err != nil {
		t.Fatal(err)
	}
	reply := func(seq uint16) script.Decoded {
		m := udpwire.Message{Header: udpwire.Header{Type: udpwire.LobbyRoomList, Seq: seq}}
		r, err := udpwire.Append(nil, udpwire.ProfileSpec, &m)
		if err != nil {
			t.Fatal(err)
		}
		return Catalog.Decode(s, ChannelLobby, r)
	}
	for i, tc := range []struct {
		seq        uint16
		stale      bool
		malformed  string
		violations []string
	}{
		{1, true, "bad_crc", []string{"U-MALFORMED-REPLY"}},
		{1, true, "", nil}, // a copy: counted once, as a reply and as a violation
		{2, false, "", nil},
	} {
		d := reply(tc.seq)
		var rules []string
		for _, v := range d.Violations {
			rules = append(rules, v.Rule)
		}
		if d.Stale != tc.stale || d.Malformed != tc.malformed || !slices.Equal(rules, tc.violations) {
			t.Errorf("reply %d (seq %d): stale %v, malformed %q, violations %v; want %v, %q, %v",
				i, tc.seq, d.Stale, d.Malformed, rules, tc.stale, tc.malformed, tc.violations)
		}
	}
}
