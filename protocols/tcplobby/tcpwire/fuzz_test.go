package tcpwire

import (
	"bytes"
	"reflect"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, s := range samples() {
		f.Add(Marshal(s.msg))
	}
	f.Add([]byte{})
	f.Add([]byte{0x02, 17})
	f.Add([]byte{0x1F, 1, 'a', 0, 0})
}

// checkDecoded asserts the invariants of a successful decode of p.
func checkDecoded(t *testing.T, p []byte, m Message, o Options) {
	t.Helper()
	if m.Type() != Type(p[0]) {
		t.Fatalf("type %v from byte 0x%02x", m.Type(), p[0])
	}
	re := Marshal(m)
	if len(re) != m.Size() {
		t.Fatalf("Size %d, Marshal %d", m.Size(), len(re))
	}
	// decode(encode(x)) == x in the same mode.
	m2 := New(m.Type())
	if err := m2.DecodeOpts(re, o); err != nil {
		t.Fatalf("re-decode: %v\n%s", err, dump(re))
	}
	if !reflect.DeepEqual(m, m2) && !hasNaN(m) {
		t.Fatalf("re-decode differs:\n%+v\n%+v", m, m2)
	}
	// A strictly valid payload re-encodes to the same bytes, except for the
	// NUL bytes ERROR_MSG tolerates at its end, and bools/lenient leftovers.
	if !o.Lenient && !o.Pedantic && m.Type() != TypeErrorMsg && !bytes.Equal(re, p) {
		t.Fatalf("re-encode differs:\n%s\n%s", dump(p), dump(re))
	}
}

func hasNaN(m Message) bool {
	g, ok := m.(*GameStart)
	if !ok {
		return false
	}
	for _, s := range g.Spawn {
		if s[0] != s[0] || s[1] != s[1] {
			return true
		}
	}
	return false
}

// FuzzDecode feeds arbitrary payloads to every decoder (dispatch on p[0]),
// strict, lenient and pedantic: never a panic, errors always carry a rule,
// and successful decodes round-trip.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, p []byte) {
		for _, o := range []Options{{}, {Lenient: true}, {Pedantic: true}} {
			m, err := DecodeOpts(p, o)
			if err != nil {
				if RuleOf(err) == "" {
					t.Fatalf("error without rule: %v", err)
				}
				continue
			}
			checkDecoded(t, p, m, o)
		}
	})
}

// FuzzDecodeEachType forces the type byte to each of the 18 types so every
// decoder sees arbitrary bodies, including the wrong-type path.
func FuzzDecodeEachType(f *testing.F) {
	for _, s := range samples() {
		f.Add(uint8(0), Marshal(s.msg)[1:])
	}
	f.Fuzz(func(t *testing.T, ti uint8, body []byte) {
		ty := Types[int(ti)%len(Types)]
		p := append([]byte{byte(ty)}, body...)
		for _, target := range []Type{ty, Types[(int(ti)+1)%len(Types)]} {
			m := New(target)
			err := m.DecodeOpts(p, Options{})
			if err != nil {
				if RuleOf(err) == "" {
					t.Fatalf("error without rule: %v", err)
				}
				continue
			}
			if target != ty {
				t.Fatalf("%v decoded a %v payload", target, ty)
			}
			checkDecoded(t, p, m, Options{})
		}
	})
}

// FuzzFrameReader reads an arbitrary stream with a small maximum: never a
// panic, never a payload over the maximum, errors carry a rule or are io.EOF.
func FuzzFrameReader(f *testing.F) {
	var all []byte
	for _, s := range samples() {
		all = AppendFrame(all, s.msg)
	}
	f.Add(all)
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 1})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 300
		fr := NewFrameReader(bytes.NewReader(b), max)
		for i := 0; i <= len(b); i++ { // each frame consumes >= 5 bytes
			p, err := fr.Next()
			if err != nil {
				if RuleOf(err) == "" && err.Error() != "EOF" {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(p) == 0 || len(p) > max {
				t.Fatalf("payload of %d bytes", len(p))
			}
			_, _ = Decode(p)
		}
		t.Fatal("reader did not terminate")
	})
}

// FuzzMakeName checks that names are always terminated and never longer
// than 31 bytes.
func FuzzMakeName(f *testing.F) {
	f.Add("Player1")
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaaaaaaa🚀")
	f.Fuzz(func(t *testing.T, s string) {
		n := MakeName(s)
		if n[NameSize-1] != 0 || !bytes.HasPrefix([]byte(s), []byte(n.String())) {
			t.Fatalf("%q -> %q", s, n.String())
		}
		var m ConnectReq
		if err := DecodeInto(Marshal(&ConnectReq{PlayerName: n}), &m); err != nil || m.PlayerName != n {
			t.Fatalf("round trip: %v", err)
		}
	})
}
