package rxbuf

import (
	"bytes"
	"net"
	"testing"
	"time"
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

// TestConnParksEmptyHanded: a Conn waiting for a datagram holds no
// buffer (Linux), and reads a large one whole.
func TestConnParksEmptyHanded(t *testing.T) {
	if !Supported {
		t.Skip("off Linux a Conn holds a Scratch while it waits")
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := NewConn(c)
	for _, size := range []int{100, 20_000} {
		want := bytes.Repeat([]byte{7}, size)
		if _, err := c.WriteToUDPAddrPort(want, c.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, _, err := r.Read()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Read = %d bytes, %v; want the %d whole", len(got), err, size)
		}
		if r.buf.Held() == 0 {
			t.Fatal("the datagram Read returned is held by nothing")
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, _, err := r.Read(); err == nil {
			t.Fatal("a Read with nothing sent returned a datagram")
		}
		if n := r.buf.Held(); n != 0 {
			t.Errorf("after waiting for nothing the Conn holds %d bytes", n)
		}
	}
}
