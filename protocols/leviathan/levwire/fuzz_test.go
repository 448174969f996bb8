package levwire

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func addGoldenSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.hex"))
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err == nil {
			f.Add(unhex(f, string(raw)))
		}
	}
}

// FuzzDecode: no panic in either mode; a strict success is a lenient success
// with the same result; a fully decoded packet re-encodes to the same bytes;
// every decoded payload decodes on its own.
func FuzzDecode(f *testing.F) {
	addGoldenSeeds(f)
	f.Add(unhex(f, lnHdr+" 03"+reqConnect+reqIdent+resNone))
	f.Add(unhex(f, "4c6e 000003e9 000003e9 05 01 00 00 00 01 00"))
	f.Add(unhex(f, lnHdr+" 01 28 00000001 000a ffffffff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var lp, sp Packet
		lerr := Decode(&lp, b, Lenient)
		serr := Decode(&sp, b, Strict)
		if serr == nil && (lerr != nil || !lp.Equal(&sp)) {
			t.Fatalf("strict accepted what lenient did not: %v", lerr)
		}
		for _, err := range []error{lerr, serr} {
			if err != nil {
				if _, ok := err.(*Error); !ok || Describe(err.(*Error).Rule) == "" {
					t.Fatalf("error %v is not a known *Error", err)
				}
			}
		}
		if lerr != nil {
			return
		}
		for _, m := range lp.Messages {
			var err error
			if m.Kind == KindRequest {
				_, err = DecodeRequestPayload(m.RequestType(), m.Payload)
			} else {
				_, err = DecodeResponsePayload(m.ResponseType(), m.Payload)
			}
			if err != nil {
				t.Fatalf("message %s decoded but its payload does not: %v", m, err)
			}
		}
		if lp.Stopped != nil || lp.Trailing != nil {
			return
		}
		out, err := AppendPacket(nil, &lp)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoded %x, input %x", out, b)
		}
	})
}

// FuzzPayload: each typed payload decoder on arbitrary bytes; no panic, and
// a success re-encodes to the input (bools normalise to 0/1).
func FuzzPayload(f *testing.F) {
	f.Add(true, uint16(ReqConnect), []byte{0, 0, 0, 42})
	f.Add(true, uint16(ReqServerstatus), []byte{})
	f.Add(false, uint16(ResServerStatus), unhex(f, "00000001 41 01 00 01 00000000 00000000 00000000 00000000"))
	f.Add(false, uint16(ResServerAllow), []byte{0, 0, 0, 0, 1})
	f.Add(true, uint16(ReqAuthenticate), unhex(f, "00000001 41 0000000000000001 00000000"))
	f.Fuzz(func(t *testing.T, req bool, typ uint16, b []byte) {
		var (
			p   interface{ Append([]byte) []byte }
			err error
		)
		if req {
			p, err = DecodeRequestPayload(RequestType(typ), b)
		} else {
			p, err = DecodeResponsePayload(ResponseType(typ), b)
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T", err)
			}
			return
		}
		out := p.Append(nil)
		if !bytes.Equal(out, b) {
			if s, ok := p.(*ServerStatus); ok && len(b) > 4+len(s.Name) && b[4+len(s.Name)] > 1 {
				return // bool byte > 1 reads as true and re-encodes as 1
			}
			t.Fatalf("%T re-encoded %x, input %x", p, out, b)
		}
	})
}

// FuzzAcks: an id window packs and unpacks to itself under both readings,
// and arbitrary ack fields unpack consistently with Acked.
func FuzzAcks(f *testing.F) {
	f.Add(uint32(1001), uint32(1), false, []byte{0x01})
	f.Add(uint32(0xfffffff0), uint32(0xffffffff), true, []byte{0xff, 0, 0x80})
	f.Fuzz(func(t *testing.T, base, mask uint32, seed bool, bits []byte) {
		rd := AckEngine
		if seed {
			rd = AckSeedPlusOne
		}
		// Arbitrary field: every listed id is Acked (unless it wrapped).
		start := base
		for _, id := range AppendAckedIDs(nil, start, bits, rd) {
			if id >= start && !Acked(start, bits, id, rd) {
				t.Fatalf("id %d listed but not Acked", id)
			}
		}
		// Window round trip, kept clear of 0/1 and of uint32 overflow.
		if base < 2 || base > 0xffffffff-32 || mask == 0 {
			return
		}
		var ids []uint32
		for i := 0; i < 32; i++ {
			if mask&(1<<i) != 0 {
				ids = append(ids, base+uint32(i))
			}
		}
		fld, n := PackAcks(ids, rd)
		if n != len(ids) {
			t.Fatalf("packed %d of %d", n, len(ids))
		}
		if got := AppendAckedIDs(nil, fld.Start, fld.Bytes(), rd); !slices.Equal(got, ids) {
			t.Fatalf("%v → %v", ids, got)
		}
		// The packed field survives an Ln packet.
		b := AppendNormalHeader(nil, 1, fld.Start, fld.Bytes(), 0)
		var p Packet
		if err := Decode(&p, b, Strict); err != nil || binary.BigEndian.Uint32(b[6:]) != fld.Start {
			t.Fatalf("strict decode of packed acks: %v", err)
		}
	})
}
