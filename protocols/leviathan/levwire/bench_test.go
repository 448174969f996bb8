package levwire

import (
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

// The hot path: an Ln packet acking a few ids and carrying one small message.
var benchAckIDs = []uint32{1001, 1002, 1004, 1009}

var allowMsg = []byte("Allowed, ID: 1001")

func BenchmarkEncodeLn(b *testing.B) {
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		f, _ := PackAcks(benchAckIDs, AckEngine)
		buf = AppendNormalHeader(buf[:0], 1005, f.Start, f.Bytes(), 1)
		buf = Connect{CheckValue}.Append(AppendResponseHeader(buf, 3, ResConnect, 2))
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkEncodeLnPacket(b *testing.B) {
	f, _ := PackAcks(benchAckIDs, AckEngine)
	p := &Packet{Type: TypeNormal, ID: 1005, StartAck: f.Start, Acks: f.Bytes(),
		Messages: []Message{NewResponse(3, 2, Connect{CheckValue})}}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendPacket(buf[:0], p)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeLn(b *testing.B) {
	f, _ := PackAcks(benchAckIDs, AckEngine)
	dgram := AppendNormalHeader(nil, 1005, f.Start, f.Bytes(), 1)
	dgram = AppendResponse(dgram, 3, 2, Connect{CheckValue})
	var p Packet
	var ids []uint32
	var c Connect
	b.ReportAllocs()
	b.SetBytes(int64(len(dgram)))
	for b.Loop() {
		if err := Decode(&p, dgram, Strict); err != nil {
			b.Fatal(err)
		}
		ids = p.AckedIDs(ids[:0], AckEngine)
		if err := c.Decode(p.Messages[0].Payload); err != nil || len(ids) != 4 {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeLa(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendAckOnly(buf[:0], benchAckIDs)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeLa(b *testing.B) {
	dgram, _ := AppendAckOnly(nil, benchAckIDs)
	var p Packet
	b.ReportAllocs()
	b.SetBytes(int64(len(dgram)))
	for b.Loop() {
		if err := Decode(&p, dgram, Strict); err != nil || len(p.AckIDs) != 4 {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeLnStringPayload decodes a ServerAllow: the string stays a
// sub-slice of the datagram.
func BenchmarkDecodeLnStringPayload(b *testing.B) {
	dgram := AppendNormalHeader(nil, 1005, 1001, []byte{0x0f}, 1)
	dgram = AppendResponse(dgram, 3, 2, ServerAllow{AcceptConnectAccepted, []byte("Allowed, ID: 1001")})
	var p Packet
	var a ServerAllow
	b.ReportAllocs()
	b.SetBytes(int64(len(dgram)))
	for b.Loop() {
		if err := Decode(&p, dgram, Lenient); err != nil {
			b.Fatal(err)
		}
		if err := a.Decode(p.Messages[0].Payload); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	f, _ := PackAcks(benchAckIDs, AckEngine)
	dgram := AppendNormalHeader(nil, 1005, f.Start, f.Bytes(), 1)
	dgram = AppendResponse(dgram, 3, 2, Connect{CheckValue})
	la, _ := AppendAckOnly(nil, benchAckIDs)
	var p Packet
	buf := make([]byte, 0, 128)
	ids := make([]uint32, 0, 8)
	_ = Decode(&p, dgram, Strict) // grow p.Messages once
	_ = Decode(&p, la, Strict)    // and p.AckIDs
	for name, fn := range map[string]func(){
		"encode Ln": func() {
			f, _ := PackAcks(benchAckIDs, AckEngine)
			buf = AppendNormalHeader(buf[:0], 1005, f.Start, f.Bytes(), 1)
			buf = Connect{CheckValue}.Append(AppendResponseHeader(buf, 3, ResConnect, 2))
		},
		"encode Ln string payload": func() {
			buf = AppendNormalHeader(buf[:0], 1005, 1001, []byte{1}, 1)
			buf = ServerAllow{AcceptConnectAccepted, allowMsg}.Append(AppendResponseHeader(buf, 3, ResServerAllow, 2))
		},
		"decode Ln": func() {
			if Decode(&p, dgram, Strict) != nil {
				panic("decode")
			}
			ids = p.AckedIDs(ids[:0], AckEngine)
		},
		"encode La": func() { buf, _ = AppendAckOnly(buf[:0], benchAckIDs) },
		"decode La": func() {
			if Decode(&p, la, Strict) != nil {
				panic("decode")
			}
		},
	} {
		if n := memfig.Allocs(100, fn); n != 0 {
			t.Errorf("%s: %.1f allocs per run, want 0", name, n)
		}
	}
}
