package levscript

import (
	"bytes"
	"testing"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// FuzzDecode: any bytes decode without a panic; every violation is a
// codec rule; a message read with no violation encodes back, from its
// decoded fields, to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, m := range Catalog.Messages() {
		b, err := Catalog.Encode(nil, m.Name, samples[m.Name])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x28, 0, 0, 0, 1, 0, 10, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x12, 0, 0, 0, 1, 0, 11, 0, 0, 0, 1, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := Catalog.Decode(Catalog.NewSession(nil), "", b)
		for _, v := range d.Violations {
			if lv.Describe(lv.Rule(v.Rule)) == "" {
				t.Fatalf("violation %+v is no codec rule", v)
			}
		}
		if d.Name == "" && d.Fields != nil {
			t.Fatalf("fields %v of no message", d.Fields)
		}
		if len(d.Violations) > 0 {
			return
		}
		again, err := Catalog.Encode(nil, d.Name, d.Fields)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%s %v re-encodes to % x (%v), read from % x", d.Name, d.Fields, again, err, b)
		}
	})
}
