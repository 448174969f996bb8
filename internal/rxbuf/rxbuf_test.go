package rxbuf

import (
	"bytes"
	"testing"
)

// TestKeep: a datagram is kept whole whatever its size; one that fits is
// copied into the small buffer (the Scratch goes back), a larger one
// holds its Scratch until the next Keep or Release.
func TestKeep(t *testing.T) {
	var r Buf
	for _, tc := range []struct {
		n        int
		wantHeld int
	}{
		{0, Small},
		{100, Small},
		{Small, Small},
		{Small + 1, Small + Size},
		{65_527, Small + Size},
		{10, Small},
	} {
		s := Get()
		want := bytes.Repeat([]byte{byte(tc.n)}, tc.n)
		copy(s.Bytes(), want)
		got := r.Keep(s, tc.n)
		if !bytes.Equal(got, want) {
			t.Errorf("Keep(%d bytes) returned %d bytes, not the datagram", tc.n, len(got))
		}
		if h := r.Held(); h != tc.wantHeld {
			t.Errorf("after Keep(%d bytes) the reader holds %d bytes, want %d", tc.n, h, tc.wantHeld)
		}
	}
	r.Release()
	if h := r.Held(); h != 0 {
		t.Errorf("after Release the reader holds %d bytes, want 0", h)
	}
}
