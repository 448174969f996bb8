package udpwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, p := range profiles {
		for _, s := range samples() {
			b, err := Append(nil, p, &s.m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, uint8(p), uint8(0), uint8(0), false)
		}
	}
	f.Add(AppendRaw(nil, ProfileSpec, Header{PacketType: 2, Type: LobbyRoomList, PayloadSize: 15, OriginalSize: 15}, padded13(Room{ID: 1, Port: 1})), uint8(0), uint8(2), uint8(1), true)
	f.Add(AppendRaw(nil, ProfileRType17, Header{PacketType: 2, Type: LobbyRoomList, PayloadSize: 19, OriginalSize: 19}, lobbySystemList(Room{ID: 1, Port: 1})), uint8(1), uint8(2), uint8(1), true)
}

// FuzzDecode checks, for any bytes and any decoder setting, that decoding
// never panics, fails only with *Error, agrees with DecodeHeader and
// GuessProfile, and that whatever decodes re-encodes to the same bytes and
// decodes again to the same message. With fixCRC the trailer is recomputed
// first, so the fuzzer can explore headers and payloads past the CRC check.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte, prof, dir, ch uint8, fixCRC bool) {
		if fixCRC && len(b) >= CRCLen {
			b = append([]byte(nil), b...)
			end := len(b) - CRCLen
			binary.BigEndian.PutUint32(b[end:], crc32.ChecksumIEEE(b[:end]))
		}
		d := Decoder{Profile: Profile(prof % 2), Dir: PacketType(dir % 3), Channel: Channel(ch % 3)}
		var m Message
		err := d.Decode(b, &m)
		_, herr := DecodeHeader(b, d.Profile)
		var mr Message
		if r := d.DecodeRule(b, &mr); r != RuleOf(err) {
			t.Fatalf("DecodeRule = %q, Decode's rule %q (%v)", r, RuleOf(err), err)
		} else if r == "" && !equalMsg(m, mr) {
			t.Fatalf("DecodeRule decoded %+v, Decode %+v", mr, m)
		}
		g, gok := GuessProfile(b)
		if gok && !LengthFits(b) {
			t.Fatalf("GuessProfile framed % x under %v, but LengthFits says its length does not fit", b, g)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if e.Rule.Describe() == "" {
				t.Fatalf("error names unlisted rule %q", e.Rule)
			}
			_ = e.Error()
			if herr == nil && isFraming(e.Rule) {
				t.Fatalf("Decode failed with framing rule %s but DecodeHeader succeeded", e.Rule)
			}
			return
		}
		if herr != nil {
			t.Fatalf("Decode succeeded but DecodeHeader failed: %v", herr)
		}
		if !gok || (g != d.Profile && !framed(b, d.Profile)) {
			t.Fatalf("decodes as %v but GuessProfile = %v, %v", d.Profile, g, gok)
		}
		re, err := Append(nil, d.Profile, &m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(re, b) {
			t.Fatalf("re-encode differs:\n got %x\nwant %x", re, b)
		}
		var m2 Message
		if err := d.Decode(re, &m2); err != nil || !equalMsg(m, m2) {
			t.Fatalf("decode(encode(x)) = %+v, %v; want %+v", m2, err, m)
		}
	})
}

func isFraming(r RuleID) bool {
	switch r {
	case RuleShort, RuleLength, RuleCRC, RuleMagic, RuleVersion, RuleCompressed, RuleOriginalSize, RulePacketType:
		return true
	}
	return false
}

// FuzzRoundTrip encodes arbitrary field values with Append and checks the
// strict decoder either accepts them unchanged or names a semantic rule
// (only room ids, ports, states and player counts can be refused).
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(0), uint8(0x41), uint16(1), uint32(0), uint32(7), uint16(8081), uint32(0), []byte{0, 0, 0, 1, 0, 1, 0, 4, 0x1f, 0x91, 0})
	f.Add(uint8(1), uint8(0x45), uint16(9), uint32(5), uint32(7), uint16(8081), uint32(0), []byte(nil))
	f.Add(uint8(1), uint8(0x20), uint16(9), uint32(5), uint32(0), uint16(0), uint32(3), []byte(nil))
	f.Fuzz(func(t *testing.T, prof, typ uint8, seq uint16, tick, roomID uint32, port uint16, value uint32, rooms []byte) {
		p := Profile(prof % 2)
		mt := MsgType(typ)
		if !mt.Known() {
			return
		}
		m := Message{Header: Header{PacketType: mt.Dir(), Type: mt, Seq: seq}}
		if p == ProfileRType17 {
			m.TickID = tick
		}
		switch msgTable[mt].kind {
		case kindRoomID:
			m.RoomID = roomID
		case kindRoomRef:
			m.RoomID, m.Port = roomID, port
		case kindU32:
			m.Value = value
		case kindU8:
			m.Value = value & 0xFF
		case kindList:
			m.Rooms = RoomList{raw: rooms[:len(rooms)/RoomEntryLen*RoomEntryLen]}
		}
		b, err := Append(nil, p, &m)
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		var got Message
		if err := (Decoder{Profile: p, Dir: mt.Dir(), Channel: mt.Channel()}).Decode(b, &got); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v", err, err)
			}
			switch e.Rule {
			case RuleRoomID, RuleRoomPort, RuleRoomState, RuleRoomPlayers:
				return
			}
			t.Fatalf("valid framing refused: %v", err)
		}
		if got.Seq != m.Seq || got.TickID != m.TickID || got.RoomID != m.RoomID || got.Port != m.Port ||
			got.Value != m.Value || !bytes.Equal(got.Rooms.raw, m.Rooms.raw) {
			t.Fatalf("decoded %+v, want %+v", got, m)
		}
	})
}
