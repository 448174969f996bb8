package levscript

import (
	"bytes"
	"encoding/hex"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// samples are one send of every message with every field given, none at
// its default.
var samples = map[string]map[string]any{
	"Request Connect":            {"MessageNumber": uint64(3), "CheckValue": uint64(42)},
	"Request Security":           {"MessageNumber": uint64(4), "SecureType": uint64(2), "PublicKey": "pk", "AdditionalSettings": "as"},
	"Request Authenticate":       {"MessageNumber": uint64(5), "UserName": "bench", "AuthToken": uint64(1) << 40, "AuthPasswd": "pw"},
	"Request Serverstatus":       {"MessageNumber": uint64(6)},
	"Request JoinServer":         {"MessageNumber": uint64(7), "MasterServerToken": uint64(0xfffffffe)},
	"Request JoinGame":           {"MessageNumber": uint64(8), "Options": "map=one"},
	"Request Echo":               {"MessageNumber": uint64(9)},
	"Response Connect":           {"MessageNumber": uint64(10), "ResponseTo": uint64(3), "CheckValue": uint64(42)},
	"Response Security":          {"MessageNumber": uint64(11), "ResponseTo": uint64(4), "SecureType": uint64(1), "PublicKey": "k", "EncryptedSymmetricKey": "e"},
	"Response Authenticate":      {"MessageNumber": uint64(12), "ResponseTo": uint64(5), "UserID": uint64(77), "UserToken": uint64(1<<63 + 5)},
	"Response Keepalive":         {"MessageNumber": uint64(13), "ResponseTo": uint64(1)},
	"Response CloseConnection":   {"MessageNumber": uint64(14), "ResponseTo": uint64(2)},
	"Response ServerDisallow":    {"MessageNumber": uint64(15), "ResponseTo": uint64(7), "Message": "full", "Reason": uint64(2)},
	"Response ServerAllow":       {"MessageNumber": uint64(16), "ResponseTo": uint64(7), "AcceptedType": uint64(2), "Message": "Allowed, ID: 1001"},
	"Response ServerStatus":      {"MessageNumber": uint64(17), "ResponseTo": uint64(6), "Name": "srv", "Joinable": true, "JoinRestrict": uint64(3), "Status": uint64(1), "Players": uint64(4), "MaxPlayers": uint64(64), "Bots": uint64(0xffffffff), "Flags": uint64(9)},
	"Response StartWorldReceive": {"MessageNumber": uint64(18), "ResponseTo": uint64(8), "WorldID": uint64(1), "WorldType": uint64(2), "ExtraOptions": "x"},
	"Response None":              {"MessageNumber": uint64(19), "ResponseTo": uint64(9)},
}

// TestRoundTrip: every message, every field given, decodes to its name and
// the same fields, with no violation, and its bytes are those the codec
// writes for it.
func TestRoundTrip(t *testing.T) {
	for _, m := range Catalog.Messages() {
		t.Run(m.Name, func(t *testing.T) {
			fields, ok := samples[m.Name]
			if !ok {
				t.Fatalf("no sample of %s", m.Name)
			}
			if got, want := slices.Sorted(maps.Keys(fields)), fieldNames(m); !slices.Equal(got, want) {
				t.Fatalf("sample gives %v, message has %v", got, want)
			}
			s := Catalog.NewSession(nil)
			b, err := Catalog.Encode(s, m.Name, fields)
			if err != nil {
				t.Fatal(err)
			}
			d := Catalog.Decode(s, "", b)
			if d.Name != m.Name || len(d.Violations) > 0 || d.Route != nil {
				t.Fatalf("decoded %q %v route %v, want %q", d.Name, d.Violations, d.Route, m.Name)
			}
			if !maps.Equal(d.Fields, fields) {
				t.Fatalf("fields %v, want %v", d.Fields, fields)
			}
		})
	}
}

func fieldNames(m script.Message) []string {
	var out []string
	for _, f := range m.Fields {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

// TestCodecBytes: a message is the codec's header and payload, byte for
// byte (the codec's own golden files hold those).
func TestCodecBytes(t *testing.T) {
	tests := []struct {
		name   string
		fields map[string]any
		want   []byte
	}{
		{"Request JoinServer", map[string]any{"MessageNumber": uint64(4)},
			lv.AppendRequest(nil, 4, lv.JoinServer{MasterServerToken: -1})},
		{"Response ServerAllow", map[string]any{"MessageNumber": uint64(2), "ResponseTo": uint64(9), "Message": "Allowed, ID: 1001"},
			lv.AppendResponse(nil, 2, 9, lv.ServerAllow{Accepted: lv.AcceptConnectAccepted, Message: []byte("Allowed, ID: 1001")})},
		{"Response ServerStatus", map[string]any{"MessageNumber": uint64(1), "ResponseTo": uint64(1), "Players": uint64(0xffffffff)},
			lv.AppendResponse(nil, 1, 1, lv.ServerStatus{Players: -1})},
	}
	for _, tt := range tests {
		got, err := Catalog.Encode(nil, tt.name, tt.fields)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: % x, %v; want % x", tt.name, got, err, tt.want)
		}
	}
}

// TestCatalogIsTheCodecs: the catalog holds exactly the message types
// whose payload the codec knows, so a shape the codec learns is a message
// here too.
func TestCatalogIsTheCodecs(t *testing.T) {
	for typ := 0; typ < 64; typ++ {
		_, req := byType(lv.KindRequest, uint16(typ))
		_, res := byType(lv.KindResponse, uint16(typ))
		if req != lv.KnownRequest(lv.RequestType(typ)) {
			t.Errorf("Request %v: in catalog %v, codec knows it %v", lv.RequestType(typ), req, !req)
		}
		if res != lv.KnownResponse(lv.ResponseType(typ)) {
			t.Errorf("Response %v: in catalog %v, codec knows it %v", lv.ResponseType(typ), res, !res)
		}
	}
}

// TestAutoFields: MessageNumber counts from 1 over the messages sent
// without one, a given one moves no counter, and ResponseTo answers the
// last request of its kind decoded (0 for the responses that answer
// nothing).
func TestAutoFields(t *testing.T) {
	s := Catalog.NewSession(nil)
	dec := func(m string, f map[string]any) {
		b, err := Catalog.Encode(nil, m, f)
		if err != nil {
			t.Fatal(err)
		}
		if d := Catalog.Decode(s, "", b); d.Name != m {
			t.Fatalf("decoded %q", d.Name)
		}
	}
	dec("Request Connect", map[string]any{"MessageNumber": uint64(41)})
	dec("Request JoinServer", map[string]any{"MessageNumber": uint64(42)})
	dec("Request JoinGame", map[string]any{"MessageNumber": uint64(43)})
	dec("Request JoinServer", map[string]any{"MessageNumber": uint64(44)})
	steps := []struct {
		name           string
		given          map[string]any
		number, answer uint64
	}{
		{"Request Echo", nil, 1, 0},
		{"Response Connect", nil, 2, 41},
		{"Request Echo", map[string]any{"MessageNumber": uint64(9)}, 9, 0},
		{"Response ServerAllow", nil, 3, 44},
		{"Response ServerDisallow", map[string]any{"ResponseTo": uint64(43)}, 4, 43},
		{"Response CloseConnection", nil, 5, 0},
		{"Response StartWorldReceive", nil, 6, 0},
		{"Response Security", nil, 7, 0},
	}
	for _, st := range steps {
		b, err := Catalog.Encode(s, st.name, st.given)
		if err != nil {
			t.Fatal(err)
		}
		d := Catalog.Decode(nil, "", b)
		if d.Fields["MessageNumber"] != st.number {
			t.Errorf("%s: MessageNumber %v, want %d", st.name, d.Fields["MessageNumber"], st.number)
		}
		if to, ok := d.Fields["ResponseTo"]; ok && to != st.answer {
			t.Errorf("%s: ResponseTo %v, want %d", st.name, to, st.answer)
		}
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMalformed: a message that breaks a rule decodes with that rule's
// violation, and with its name and fields when its header was read.
func TestMalformed(t *testing.T) {
	tests := []struct {
		what, hex, rule, name string
	}{
		{"nothing", "", "L-MSG-TRUNC", ""},
		{"short request header", "28 00000001 00", "L-MSG-TRUNC", ""},
		{"short Connect payload", "28 00000001 0000 0000", "L-MSG-TRUNC", "Request Connect"},
		{"bad kind", "30 00000001 0000 0000002a", "L-MSG-KIND", ""},
		{"unknown request type", "28 00000001 0011", "L-MSG-TYPE", ""},
		{"string past the end", "28 00000001 000a 00000009 6162", "L-STR-LEN", "Request JoinGame"},
		{"byte after Echo", "28 00000001 000f 00", "L-PAYLOAD", "Request Echo"},
		{"CheckValue 41", "12 00000001 0000 00000001 00000029", "L-CHECK-VALUE", "Response Connect"},
		{"AcceptedType 9", "12 00000001 000a 00000001 09 00000000", "L-ENUM", "Response ServerAllow"},
		{"Joinable 2", "12 00000001 000b 00000001 00000000 02 00 00 00000000 00000000 00000000 00000000", "L-BOOL", "Response ServerStatus"},
		{"MessageNumber 0", "28 00000000 000f", "L-MSG-NUM-ZERO", "Request Echo"},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			d := Catalog.Decode(Catalog.NewSession(nil), "", unhex(t, tt.hex))
			if d.Name != tt.name || len(d.Violations) != 1 || d.Violations[0].Rule != tt.rule {
				t.Fatalf("decoded %q %+v, want %q with %s", d.Name, d.Violations, tt.name, tt.rule)
			}
			if tt.name != "" && d.Fields["MessageNumber"] == nil {
				t.Errorf("named %s without its MessageNumber: %v", tt.name, d.Fields)
			}
		})
	}
}

// TestEncodeRefuses: what Encode cannot make is an error naming it.
func TestEncodeRefuses(t *testing.T) {
	tests := []struct {
		name   string
		fields map[string]any
		want   string
	}{
		{"Request Nothing", nil, `no message "Request Nothing"`},
		{"Connect", nil, `no message "Connect"`},
		{"Request Echo", map[string]any{"ResponseTo": uint64(1)}, "Request Echo has no field ResponseTo"},
		{"Request JoinGame", map[string]any{"Options": uint64(1)}, "field Options is uint64, want text"},
		{"Request JoinGame", map[string]any{"MessageNumber": "one"}, "field MessageNumber is string, want an integer"},
		{"Response ServerStatus", map[string]any{"Joinable": "yes"}, "field Joinable is string, want a bool"},
		{"Response ServerAllow", map[string]any{"Message": strings.Repeat("x", maxText+1)}, "L-ENCODE"},
	}
	for _, tt := range tests {
		s := newSession()
		_, err := Catalog.Encode(s, tt.name, tt.fields)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %.200v, want %q", tt.name, err, tt.want)
		}
		if s.NextMessageNumber != 1 {
			t.Errorf("%s: a refused message took MessageNumber %d", tt.name, s.NextMessageNumber-1)
		}
	}
}

// TestNamesInDocument: every message is named in leviathan.md §5's list of
// its kind's types, and every field name is written in the document.
func TestNamesInDocument(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/protocols/leviathan.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	lists := map[string]string{
		requestPrefix:  sectionLine(t, doc, "Request types (u16):"),
		responsePrefix: sectionLine(t, doc, "Response types (u16):"),
	}
	for _, m := range Catalog.Messages() {
		kind, typ, _ := strings.Cut(m.Name, " ")
		if !regexp.MustCompile(`\b` + typ + ` \d+\b`).MatchString(lists[kind+" "]) {
			t.Errorf("%s: %s is not in leviathan.md's %stypes", m.Name, typ, kind+" ")
		}
		for _, f := range m.Fields {
			if !regexp.MustCompile(`\b` + f.Name + `\b`).MatchString(doc) {
				t.Errorf("%s: field %s is not in leviathan.md", m.Name, f.Name)
			}
		}
	}
}

// sectionLine is the paragraph of doc that starts with prefix.
func sectionLine(t *testing.T, doc, prefix string) string {
	i := strings.Index(doc, prefix)
	if i < 0 {
		t.Fatalf("leviathan.md has no %q", prefix)
	}
	para, _, _ := strings.Cut(doc[i:], "\n\n")
	return para
}

// TestName: a message's kind and type name it as the catalog does, and
// one the catalog lacks is named "".
func TestName(t *testing.T) {
	for _, tc := range []struct {
		kind lv.MessageKind
		typ  uint16
		want string
	}{
		{lv.KindRequest, uint16(lv.ReqConnect), "Request Connect"},
		{lv.KindResponse, uint16(lv.ResConnect), "Response Connect"},
		{lv.KindResponse, uint16(lv.ResServerAllow), "Response ServerAllow"},
		{lv.KindRequest, 0xffff, ""},
		{lv.MessageKind(0x99), uint16(lv.ReqConnect), ""},
	} {
		if got := Name(tc.kind, tc.typ); got != tc.want {
			t.Errorf("Name(%v, %d) = %q, want %q", tc.kind, tc.typ, got, tc.want)
		}
	}
}

// TestDirections: the messages a script sends are the client's and those
// it expects the server's; Response Connect, which both sides send, is
// the server's, the answer every handshake expects.
func TestDirections(t *testing.T) {
	fromClient := map[string]bool{}
	for _, m := range Catalog.Messages() {
		fromClient[m.Name] = m.FromClient
	}
	for name, want := range map[string]bool{
		"Request Connect":          true,
		"Request Echo":             true,
		"Response Connect":         false,
		"Response ServerAllow":     false,
		"Response CloseConnection": true,
	} {
		if got, ok := fromClient[name]; !ok || got != want {
			t.Errorf("%s: FromClient %v (in the catalog: %v), want %v", name, got, ok, want)
		}
	}
}
