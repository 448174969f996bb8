package levwire

import (
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// unhex decodes hex with spaces, newlines and "#" comments to the end of a line.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func lnPacket(id, start uint32, acks []byte, msgs ...Message) *Packet {
	return &Packet{Type: TypeNormal, ID: id, StartAck: start, Acks: acks, MessageCount: uint8(len(msgs)), Messages: msgs}
}

type goldenCase struct {
	name string
	pkt  *Packet
}

func goldenCases() []goldenCase {
	req := func(p RequestPayload) *Packet { return lnPacket(1001, 0, nil, NewRequest(3, p)) }
	res := func(p ResponsePayload) *Packet { return lnPacket(1002, 1001, []byte{0x01}, NewResponse(4, 3, p)) }
	return []goldenCase{
		{"client_first_connect", lnPacket(FirstPacketID, 0, nil, NewRequest(1, Connect{CheckValue}))},
		{"server_connect_reply", lnPacket(FirstPacketID, FirstPacketID, []byte{0x01}, NewResponse(1, 1, Connect{CheckValue}))},
		{"ack_only", &Packet{Type: TypeAckOnly, AckIDs: []uint32{1001, 1002, 1005}}},
		{"acks_only_ln", lnPacket(1003, 1001, []byte{0xff, 0x00, 0x81})},
		{"req_security", req(SecurityRequest{SecureType: SecureTypeNone})},
		{"req_authenticate", req(AuthenticateRequest{UserName: []byte("bot1"), AuthToken: 0x0102030405060708, AuthPasswd: []byte("pw")})},
		{"req_join_server", req(JoinServer{ClientMasterServerToken})},
		{"req_join_game", req(JoinGame{Options: []byte("")})},
		{"req_echo", req(Echo{})},
		{"req_server_status", req(ServerStatusRequest{})},
		{"res_security", res(SecurityResponse{SecureType: SecureTypeNone, PublicKey: []byte("k"), EncryptedSymmetricKey: []byte("")})},
		{"res_authenticate", res(AuthenticateResponse{UserID: 7, UserToken: 0xdeadbeefcafef00d})},
		{"res_server_allow", res(ServerAllow{Accepted: AcceptConnectAccepted, Message: []byte("Allowed, ID: 1001")})},
		{"res_server_disallow", res(ServerDisallow{Message: []byte("full"), Reason: DisallowServerFull})},
		{"res_start_world_receive", res(StartWorldReceive{WorldID: 1, WorldType: 2, ExtraOptions: []byte("x=1")})},
		{"res_keepalive", res(Keepalive{})},
		{"res_close_connection", res(CloseConnection{})},
		{"res_none", lnPacket(1002, 1001, []byte{0x01}, NewResponse(4, 0, None{}))},
		{"res_server_status", res(ServerStatus{Name: []byte("lobby"), Joinable: true, JoinRestrict: 0, Status: StatusRunning, Players: 3, MaxPlayers: 16, Bots: 1, Flags: 0})},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendPacket(nil, tc.pkt)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".hex"), []byte(hex.EncodeToString(got)+"\n"))
			var p Packet
			if err := Decode(&p, got, Strict); err != nil {
				t.Fatalf("strict decode of the encoding: %v", err)
			}
			if !p.Equal(tc.pkt) {
				t.Fatalf("decoded %+v, want %+v", p, *tc.pkt)
			}
		})
	}
}

// TestFirstPacketsByHand pins the two handshake packets to bytes counted
// field by field, independent of the encoder and of the golden files.
func TestFirstPacketsByHand(t *testing.T) {
	client := unhex(t, `
		4c6e      # Ln
		000003e9  # PKT_ID 1001
		00000000  # StartAck 0: no ack fields
		01        # MessageCount 1
		28        # Request
		00000001  # MessageNumber 1
		0000      # RequestType Connect
		0000002a  # CheckValue 42`)
	if len(client) != 22 { // 2+4+4+1 header, 1+4+2 request header, 4 payload
		t.Fatalf("client packet is %d bytes, want 22", len(client))
	}
	server := unhex(t, `
		4c6e 000003e9  # Ln, PKT_ID 1001 (the server's own first id)
		000003e9       # StartAck 1001
		01 01          # one ack byte, bit 0: acks 1001
		01             # MessageCount 1
		12 00000001 0000 00000001  # Response #1 Connect, ResponseTo 1
		0000002a       # CheckValue 42`)
	for _, tc := range []struct {
		name string
		want []byte
		got  func() []byte
	}{
		{"client", client, func() []byte {
			b := AppendNormalHeader(nil, FirstPacketID, 0, nil, 1)
			return AppendRequest(b, 1, Connect{CheckValue})
		}},
		{"server", server, func() []byte {
			f, n := PackAcks([]uint32{1001}, AckEngine)
			if n != 1 {
				t.Fatalf("PackAcks packed %d", n)
			}
			b := AppendNormalHeader(nil, FirstPacketID, f.Start, f.Bytes(), 1)
			return AppendResponse(b, 1, 1, Connect{CheckValue})
		}},
	} {
		if got := tc.got(); string(got) != string(tc.want) {
			t.Errorf("%s: got %x want %x", tc.name, got, tc.want)
		}
	}
	var p Packet
	if err := Decode(&p, server, Strict); err != nil {
		t.Fatal(err)
	}
	var c Connect
	if !p.HasAck(1001, AckEngine) || p.HasAck(1002, AckEngine) || p.Messages[0].ResponseTo != 1 ||
		c.Decode(p.Messages[0].Payload) != nil || c.CheckValue != 42 {
		t.Fatalf("server reply decoded wrong: %+v", p)
	}
	// Under the seed's reading the same byte acks 1002, not 1001.
	if p.HasAck(1001, AckSeedPlusOne) || !p.HasAck(1002, AckSeedPlusOne) {
		t.Fatal("seed+1 reading of 0x01 at StartAck 1001 should ack 1002 only")
	}
}
