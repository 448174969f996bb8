package levwire

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func randBytes(r *rand.Rand) []byte {
	n := r.IntN(6)
	if r.IntN(10) == 0 {
		n = r.IntN(300)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randRequest(r *rand.Rand) RequestPayload {
	switch r.IntN(7) {
	case 5:
		return ServerStatusRequest{}
	case 0:
		return Connect{CheckValue}
	case 1:
		return SecurityRequest{int32(r.Uint32()), randBytes(r), randBytes(r)}
	case 2:
		return AuthenticateRequest{randBytes(r), r.Uint64(), randBytes(r)}
	case 3:
		return JoinServer{int32(r.Uint32())}
	case 4:
		return JoinGame{randBytes(r)}
	}
	return Echo{}
}

func randResponse(r *rand.Rand) ResponsePayload {
	switch r.IntN(10) {
	case 0:
		return Connect{CheckValue}
	case 1:
		return SecurityResponse{int32(r.Uint32()), randBytes(r), randBytes(r)}
	case 2:
		return AuthenticateResponse{int32(r.Uint32()), r.Uint64()}
	case 3:
		return ServerAllow{AcceptedType(r.IntN(3)), randBytes(r)}
	case 4:
		return ServerDisallow{randBytes(r), DisallowReason(r.IntN(8))}
	case 5:
		return StartWorldReceive{int32(r.Uint32()), int32(r.Uint32()), randBytes(r)}
	case 6:
		return Keepalive{}
	case 7:
		return CloseConnection{}
	case 8:
		return None{}
	}
	return ServerStatus{randBytes(r), r.IntN(2) == 1, uint8(r.Uint32()), ServerStatusCode(r.IntN(4)),
		int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32())}
}

// randPacket returns a valid packet (it passes Strict decoding).
func randPacket(r *rand.Rand) *Packet {
	if r.IntN(4) == 0 {
		ids := make([]uint32, 1+r.IntN(MaxAckOnlyIDs))
		for i := range ids {
			ids[i] = 1 + r.Uint32N(1<<31)
		}
		return &Packet{Type: TypeAckOnly, AckIDs: ids}
	}
	p := &Packet{Type: TypeNormal, ID: 1 + r.Uint32N(1<<31)}
	if r.IntN(3) > 0 {
		base := 2 + r.Uint32N(1<<31)
		var ids []uint32
		for i := 0; i < 1+r.IntN(8); i++ {
			ids = append(ids, base+r.Uint32N(40))
		}
		f, _ := PackAcks(ids, AckReading(r.IntN(2)))
		p.StartAck, p.Acks = f.Start, slices.Clone(f.Bytes())
	}
	for i := 0; i < r.IntN(4); i++ {
		num := 1 + r.Uint32N(1000)
		if r.IntN(2) == 0 {
			p.Messages = append(p.Messages, NewRequest(num, randRequest(r)))
		} else {
			p.Messages = append(p.Messages, NewResponse(num, r.Uint32N(1000), randResponse(r)))
		}
	}
	p.MessageCount = uint8(len(p.Messages))
	return p
}

func TestRoundTripPackets(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2026))
	var got Packet
	var buf []byte
	for i := 0; i < 3000; i++ {
		want := randPacket(r)
		var err error
		buf, err = AppendPacket(buf[:0], want)
		if err != nil {
			t.Fatalf("#%d encode %+v: %v", i, want, err)
		}
		if err := Decode(&got, buf, Strict); err != nil {
			t.Fatalf("#%d strict decode of %x: %v", i, buf, err)
		}
		if !got.Equal(want) {
			t.Fatalf("#%d round trip:\n got %+v\nwant %+v", i, got, *want)
		}
		// Typed payloads survive decode → Append byte for byte.
		for _, m := range got.Messages {
			var re []byte
			if m.Kind == KindRequest {
				p, err := DecodeRequestPayload(m.RequestType(), m.Payload)
				if err != nil {
					t.Fatal(err)
				}
				re = p.Append(nil)
			} else {
				p, err := DecodeResponsePayload(m.ResponseType(), m.Payload)
				if err != nil {
					t.Fatal(err)
				}
				re = p.Append(nil)
			}
			if !bytes.Equal(re, m.Payload) {
				t.Fatalf("#%d payload %s: %x re-encoded as %x", i, m, m.Payload, re)
			}
		}
	}
}

func TestRoundTripAcks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 2026))
	for i := 0; i < 5000; i++ {
		rd := AckReading(r.IntN(2))
		base := 2 + r.Uint32N(1<<31)
		set := map[uint32]bool{}
		var ids []uint32
		for j := 0; j < 1+r.IntN(20); j++ {
			id := base + r.Uint32N(32)
			ids = append(ids, id)
			set[id] = true
		}
		f, packed := PackAcks(ids, rd)
		if packed != len(ids) {
			t.Fatalf("all ids fit in 32 but packed %d of %d", packed, len(ids))
		}
		if n := len(f.Bytes()); n == 0 || n > MaxAckBytes || f.Bytes()[n-1] == 0 {
			t.Fatalf("ack bytes %x", f.Bytes())
		}
		got := AppendAckedIDs(nil, f.Start, f.Bytes(), rd)
		want := slices.Sorted(func(yield func(uint32) bool) {
			for id := range set {
				if !yield(id) {
					return
				}
			}
		})
		if !slices.Equal(got, want) {
			t.Fatalf("%s: ids %v → start %d bytes %x → %v", rd, ids, f.Start, f.Bytes(), got)
		}
	}
}
