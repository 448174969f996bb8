package levwire

import (
	"errors"
	"strings"
	"testing"
)

// Pieces of hex used by the error table.
const (
	lnHdr      = "4c6e 000003e9 00000000"          // Ln, PKT_ID 1001, StartAck 0
	reqConnect = "28 00000001 0000 0000002a"       // Request #1 Connect 42
	resNone    = "12 00000002 001c 00000000"       // Response #2 None to 0
	reqIdent   = "28 00000003 0003 deadbeef"       // Request Identification: no known payload
	resInvalid = "12 00000003 0008 00000000 00"    // Response InvalidRequest: no known payload
	resAllow   = "12 00000002 000a 00000001 00 %s" // ServerAllow, string follows
	statusBody = "00000001 41 %s 00 01 00000000 00000000 00000000 00000000"
)

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		hex  string
		mode Mode
		rule Rule // "" means: decodes without error in this mode
	}{
		{"empty datagram", "", Lenient, RuleShortHeader},
		{"one byte", "4c", Lenient, RuleShortHeader},
		{"bad type", "4c62 000003e9 00000000 00", Lenient, RuleBadType},
		{"bad type zero", "0000", Lenient, RuleBadType},
		{"ln truncated id", "4c6e 0000", Lenient, RuleShortHeader},
		{"ln truncated startack", "4c6e 000003e9 0000", Lenient, RuleShortHeader},
		{"ln no message count", lnHdr, Lenient, RuleShortHeader},
		{"pkt id zero", "4c6e 00000000 00000000 00", Lenient, RulePacketIDZero},
		{"ack count missing", "4c6e 000003e9 000003e9", Lenient, RuleAckTruncated},
		{"ack bytes truncated", "4c6e 000003e9 000003e9 03 ff ff", Lenient, RuleAckTruncated},
		{"ack field then no count", "4c6e 000003e9 000003e9 01 ff", Lenient, RuleShortHeader},
		{"ack count 0 lenient", "4c6e 000003e9 000003e9 00 00", Lenient, ""},
		{"ack count 0 strict", "4c6e 000003e9 000003e9 00 00", Strict, RuleAckCount},
		{"ack count 5 lenient", "4c6e 000003e9 000003e9 05 01 00 00 00 01 00", Lenient, ""},
		{"ack count 5 strict", "4c6e 000003e9 000003e9 05 01 00 00 00 01 00", Strict, RuleAckCount},
		{"ack zero tail lenient", "4c6e 000003e9 000003e9 02 01 00 00", Lenient, ""},
		{"ack zero tail strict", "4c6e 000003e9 000003e9 02 01 00 00", Strict, RuleAckZeroTail},
		{"message missing", lnHdr + " 01", Lenient, RuleMsgTruncated},
		{"second message missing", lnHdr + " 02" + reqConnect, Lenient, RuleMsgTruncated},
		{"request header truncated", lnHdr + " 01 28 00000001 00", Lenient, RuleMsgTruncated},
		{"response header truncated", lnHdr + " 01 12 00000001 0000 000000", Lenient, RuleMsgTruncated},
		{"payload truncated", lnHdr + " 01 28 00000001 0000 0000", Lenient, RuleMsgTruncated},
		{"string length missing", lnHdr + " 01 28 00000001 000a 0000", Lenient, RuleMsgTruncated},
		{"string length beyond datagram", lnHdr + " 01 28 00000001 000a 00000005 4142", Lenient, RuleStringLength},
		{"string length huge", lnHdr + " 01 28 00000001 000a ffffffff", Lenient, RuleStringLength},
		{"string length fits exactly", lnHdr + " 01 28 00000001 000a 00000002 4142", Strict, ""},
		{"unknown kind lenient stops", lnHdr + " 01 99 00", Lenient, ""},
		{"unknown kind strict", lnHdr + " 01 99 00", Strict, RuleMsgKind},
		{"unknown request type lenient stops", lnHdr + " 01" + reqIdent, Lenient, ""},
		{"unknown request type strict", lnHdr + " 01" + reqIdent, Strict, RuleMsgType},
		{"unknown response type strict", lnHdr + " 01" + resInvalid, Strict, RuleMsgType},
		{"message number zero lenient", lnHdr + " 01 28 00000000 0000 0000002a", Lenient, ""},
		{"message number zero strict", lnHdr + " 01 28 00000000 0000 0000002a", Strict, RuleMsgNumberZero},
		{"check value 41 lenient", lnHdr + " 01 28 00000001 0000 00000029", Lenient, ""},
		{"check value 41 strict", lnHdr + " 01 28 00000001 0000 00000029", Strict, RuleCheckValue},
		{"bool 2 lenient", lnHdr + " 01 12 00000001 000b 00000000" + strings.Replace(statusBody, "%s", "02", 1), Lenient, ""},
		{"bool 2 strict", lnHdr + " 01 12 00000001 000b 00000000" + strings.Replace(statusBody, "%s", "02", 1), Strict, RuleBool},
		{"status 4 lenient", lnHdr + " 01 12 00000001 000b 00000000" + strings.Replace(statusBody, "41 %s 00 01", "41 01 00 04", 1), Lenient, ""},
		{"status 4 strict", lnHdr + " 01 12 00000001 000b 00000000" + strings.Replace(statusBody, "41 %s 00 01", "41 01 00 04", 1), Strict, RuleEnum},
		{"status 3 strict", lnHdr + " 01 12 00000001 000b 00000000" + strings.Replace(statusBody, "41 %s 00 01", "41 01 00 03", 1), Strict, ""},
		{"accepted 3 strict", lnHdr + " 01" + strings.Replace(resAllow, "00 %s", "03 00000000", 1), Strict, RuleEnum},
		{"accepted 2 strict", lnHdr + " 01" + strings.Replace(resAllow, "00 %s", "02 00000000", 1), Strict, ""},
		{"reason 8 lenient", lnHdr + " 01 12 00000002 0009 00000001 00000000 08", Lenient, ""},
		{"reason 8 strict", lnHdr + " 01 12 00000002 0009 00000001 00000000 08", Strict, RuleEnum},
		{"reason 7 strict", lnHdr + " 01 12 00000002 0009 00000001 00000000 07", Strict, ""},
		{"trailing lenient", lnHdr + " 01" + reqConnect + " ffff", Lenient, ""},
		{"trailing strict", lnHdr + " 01" + reqConnect + " ffff", Strict, RuleTrailing},
		{"count 0 with bytes strict", lnHdr + " 00" + reqConnect, Strict, RuleTrailing},
		{"two messages strict", lnHdr + " 02" + reqConnect + resNone, Strict, ""},
		{"la no count", "4c61", Lenient, RuleShortHeader},
		{"la truncated ids", "4c61 02 000003e9 0000", Lenient, RuleAckOnlyTrunc},
		{"la count 0 lenient", "4c61 00", Lenient, ""},
		{"la count 0 strict", "4c61 00", Strict, RuleAckOnlyCount},
		{"la count 5 strict", "4c61 05" + strings.Repeat(" 00000001", 5), Strict, RuleAckOnlyCount},
		{"la count 5 lenient", "4c61 05" + strings.Repeat(" 00000001", 5), Lenient, ""},
		{"la id 0 strict", "4c61 01 00000000", Strict, RuleAckOnlyIDZero},
		{"la trailing strict", "4c61 01 000003e9 00", Strict, RuleTrailing},
		{"la trailing lenient", "4c61 01 000003e9 00", Lenient, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Packet
			err := Decode(&p, unhex(t, tc.hex), tc.mode)
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error %s", err, err, tc.rule)
			}
			if e.Rule != tc.rule {
				t.Fatalf("rule %s (%v), want %s", e.Rule, err, tc.rule)
			}
			if !errors.Is(err, &Error{Rule: tc.rule}) {
				t.Fatal("errors.Is by rule failed")
			}
			if Describe(e.Rule) == "" {
				t.Fatalf("rule %s missing from Rules", e.Rule)
			}
		})
	}
}

func TestDecodeDatagramTooLarge(t *testing.T) {
	b := make([]byte, MaxDatagram+1)
	copy(b, unhex(t, lnHdr+" 00"))
	var p Packet
	if err := Decode(&p, b, Lenient); !errors.Is(err, &Error{Rule: RuleDatagramSize}) {
		t.Fatalf("got %v", err)
	}
}

func TestLenientStopAndTrailing(t *testing.T) {
	// Connect, then an Identification request whose payload shape is unknown,
	// then a Response None the engine would never reach.
	b := unhex(t, lnHdr+" 03"+reqConnect+reqIdent+resNone)
	var p Packet
	if err := Decode(&p, b, Lenient); err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || p.MessageCount != 3 || p.Stopped == nil || p.Stopped.Rule != RuleMsgType {
		t.Fatalf("messages %d count %d stopped %v", len(p.Messages), p.MessageCount, p.Stopped)
	}
	if want := unhex(t, reqIdent+resNone); string(p.Trailing) != string(want) {
		t.Fatalf("trailing %x want %x", p.Trailing, want)
	}
	if p.Stopped.Offset != 11+11 {
		t.Fatalf("stop offset %d", p.Stopped.Offset)
	}

	// Clean packet: no Stopped, no Trailing.
	if err := Decode(&p, unhex(t, lnHdr+" 01"+reqConnect), Lenient); err != nil || p.Stopped != nil || p.Trailing != nil {
		t.Fatalf("reuse of Packet kept stale state: %v %+v", err, p)
	}
}

// TestServerstatusRequestKnown checks an empty Serverstatus request (type
// 4) has a shape: decoding goes on past it to the next message, strictly.
func TestServerstatusRequestKnown(t *testing.T) {
	b := unhex(t, lnHdr+" 02"+"28 00000003 0004"+reqConnect)
	var p Packet
	if err := Decode(&p, b, Strict); err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 2 || p.Messages[0].RequestType() != ReqServerstatus || len(p.Messages[0].Payload) != 0 ||
		p.Messages[1].RequestType() != ReqConnect || p.Stopped != nil || p.Trailing != nil {
		t.Fatalf("decoded %+v", p)
	}
	if !KnownRequest(ReqServerstatus) {
		t.Error("KnownRequest(Serverstatus) = false")
	}
	if pl, err := DecodeRequestPayload(ReqServerstatus, nil); err != nil || pl.RequestType() != ReqServerstatus {
		t.Errorf("DecodeRequestPayload = %v, %v", pl, err)
	}
}

func TestEmbeddedAckOnly(t *testing.T) {
	// The engine defect: previous Ln packet bytes, then the La section.
	b := unhex(t, lnHdr+" 01"+reqConnect+" 4c61 01 000003e9")
	var p Packet
	if err := Decode(&p, b, Lenient); err != nil {
		t.Fatal(err)
	}
	if !p.EmbeddedAckOnly() {
		t.Fatalf("EmbeddedAckOnly false, trailing %x", p.Trailing)
	}
	var la Packet
	if err := Decode(&la, p.Trailing, Strict); err != nil || la.Type != TypeAckOnly || la.AckIDs[0] != 1001 {
		t.Fatalf("embedded La: %v %+v", err, la)
	}
	if err := Decode(&p, unhex(t, lnHdr+" 01"+reqConnect+" ffff"), Lenient); err != nil || p.EmbeddedAckOnly() {
		t.Fatal("junk trailing bytes reported as embedded La")
	}
}

func TestStringsAliasInput(t *testing.T) {
	b := unhex(t, lnHdr+" 01"+strings.Replace(resAllow, "%s", "00000011 416c6c6f7765642c2049443a2031303031", 1))
	var p Packet
	if err := Decode(&p, b, Strict); err != nil {
		t.Fatal(err)
	}
	var a ServerAllow
	if err := a.Decode(p.Messages[0].Payload); err != nil {
		t.Fatal(err)
	}
	if string(a.Message) != "Allowed, ID: 1001" {
		t.Fatalf("message %q", a.Message)
	}
	if id, ok := a.PlayerID(); !ok || id != 1001 {
		t.Fatalf("PlayerID %d %v", id, ok)
	}
	kept := a.Clone()
	pc := p.Clone()
	for i := range b {
		b[i] = 'X'
	}
	if string(a.Message) == "Allowed, ID: 1001" {
		t.Fatal("decoded string should alias the datagram")
	}
	if string(kept.Message) != "Allowed, ID: 1001" {
		t.Fatal("Clone still aliases the datagram")
	}
	if err := kept.Decode(pc.Messages[0].Payload); err != nil || string(kept.Message) != "Allowed, ID: 1001" {
		t.Fatal("Packet.Clone still aliases the datagram")
	}
}

func TestPayloadDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		dec  func([]byte) error
		hex  string
		rule Rule
	}{
		{"connect short", new(Connect).Decode, "000000", RuleMsgTruncated},
		{"connect long", new(Connect).Decode, "0000002a00", RulePayload},
		{"echo not empty", new(Echo).Decode, "00", RulePayload},
		{"server status request not empty", new(ServerStatusRequest).Decode, "00", RulePayload},
		{"server status request empty", new(ServerStatusRequest).Decode, "", ""},
		{"join game string too long", new(JoinGame).Decode, "00000004 4142", RuleStringLength},
		{"auth request token short", new(AuthenticateRequest).Decode, "00000000 0102", RuleMsgTruncated},
		{"disallow reason missing", new(ServerDisallow).Decode, "00000000", RuleMsgTruncated},
		{"status ok", new(ServerStatus).Decode, strings.Replace(statusBody, "%s", "01", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.dec(unhex(t, tc.hex))
			if tc.rule == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, &Error{Rule: tc.rule}) {
				t.Fatalf("got %v want %s", err, tc.rule)
			}
		})
	}
	if _, err := DecodeRequestPayload(ReqIdentification, nil); !errors.Is(err, &Error{Rule: RuleMsgType}) {
		t.Fatalf("unknown request payload: %v", err)
	}
	if _, err := DecodeResponsePayload(ResInvalidRequest, nil); !errors.Is(err, &Error{Rule: RuleMsgType}) {
		t.Fatalf("unknown response payload: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Packet
	}{
		{"pkt id 0", &Packet{Type: TypeNormal}},
		{"acks without start", &Packet{Type: TypeNormal, ID: 1, Acks: []byte{1}}},
		{"256 ack bytes", &Packet{Type: TypeNormal, ID: 1, StartAck: 1, Acks: make([]byte, 256)}},
		{"256 messages", &Packet{Type: TypeNormal, ID: 1, Messages: make([]Message, 256)}},
		{"256 la ids", &Packet{Type: TypeAckOnly, AckIDs: make([]uint32, 256)}},
		{"bad type", &Packet{Type: 0x1234, ID: 1}},
		{"too large", &Packet{Type: TypeNormal, ID: 1, Messages: []Message{NewRequest(1, JoinGame{Options: make([]byte, MaxDatagram)})}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("keep")
			out, err := AppendPacket(prefix, tc.p)
			if !errors.Is(err, &Error{Rule: RuleEncode}) {
				t.Fatalf("got %v", err)
			}
			if string(out) != "keep" {
				t.Fatalf("buffer changed on error: %q", out)
			}
		})
	}
}

func TestRulesTable(t *testing.T) {
	seen := map[Rule]bool{}
	for _, r := range Rules {
		if !strings.HasPrefix(string(r.ID), "L-") || r.Desc == "" || seen[r.ID] {
			t.Fatalf("bad or duplicate rule %+v", r)
		}
		seen[r.ID] = true
	}
	if Describe("L-NOPE") != "" {
		t.Fatal("Describe of unknown rule")
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{TypeNormal.String(), "Ln"},
		{TypeAckOnly.String(), "La"},
		{PacketType(0x1234).String(), "PacketType(0x1234)"},
		{KindRequest.String(), "Request"},
		{ReqConnect.String(), "Connect"},
		{ReqJoinGame.String(), "JoinGame"},
		{ReqCustom.String(), "Custom"},
		{RequestType(18).String(), "RequestType(18)"},
		{ResServerDisallow.String(), "ServerDisallow"},
		{ResStartWorldReceive.String(), "StartWorldReceive"},
		{ResNone.String(), "None"},
		{ResCustom.String(), "Custom"},
		{ResponseType(30).String(), "ResponseType(30)"},
		{DisallowServerFull.String(), "ServerFull"},
		{DisallowServerCustom.String(), "ServerCustom"},
		{AcceptDone.String(), "Done"},
		{StatusRestart.String(), "Restart"},
		{AckSeedPlusOne.String(), "seed+1"},
		{NewResponse(2, 1, Connect{42}).String(), "Response Connect #2 to 1"},
		{NewRequest(1, Echo{}).String(), "Request Echo #1"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q want %q", tc.got, tc.want)
		}
	}
	if ResCustom != 29 || ReqCustom != 17 || ResNone != 28 || ResServerAllow != 10 || ReqEcho != 15 {
		t.Fatal("enum values drifted from leviathan.md §5")
	}
}

func TestDecodeErrorKeepsPrefix(t *testing.T) {
	// MessageCount 2 but only one message: the first stays visible.
	var p Packet
	err := Decode(&p, unhex(t, "4c6e 000003e9 000003e9 01 01 02"+reqConnect), Lenient)
	if !errors.Is(err, &Error{Rule: RuleMsgTruncated}) {
		t.Fatalf("got %v", err)
	}
	if p.ID != 1001 || !p.HasAck(1001, AckEngine) || len(p.Messages) != 1 || p.Messages[0].RequestType() != ReqConnect {
		t.Fatalf("prefix lost: %+v", p)
	}
}
