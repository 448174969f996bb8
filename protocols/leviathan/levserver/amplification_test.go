package levserver

import (
	"net"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// TestAmplificationBound: sources that send one Connect and never ack
// anything (a spoofed address: the victim never acks) get back at most
// AmplificationFactor times the bytes they sent, though the engine resends
// Response Connect until its 5 transmissions are spent; a client that
// completes the handshake is verified and unbounded.
func TestAmplificationBound(t *testing.T) {
	const sources = 20
	s := start(t, func(c *Config) {
		c.Conn.LostAfter = 20 * time.Millisecond
		c.Conn.CloseOnCriticalLoss = true // the 5th transmission lost ends the connection: the test's end
	})
	connect := lv.AppendNormalHeader(nil, lv.FirstPacketID, 0, nil, 1)
	connect = lv.AppendRequestHeader(connect, 1, lv.ReqConnect)
	connect = lv.Connect{CheckValue: lv.CheckValue}.Append(connect)
	socks := make([]*net.UDPConn, sources)
	for i := range socks {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		socks[i] = c
		if _, err := c.WriteToUDPAddrPort(connect, s.Addr()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every connection to spend its Response Connect's transmissions", func() bool {
		return s.Stats().Closes["critical-lost"] == sources
	})
	// Loopback delivers a datagram into the receiving socket's buffer
	// before the sender's write returns: everything sent is there, and a
	// read waits only once a socket is empty.
	var in int
	buf := make([]byte, 2048)
	for _, c := range socks {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		for {
			n, err := c.Read(buf)
			if err != nil {
				break
			}
			in += n
		}
	}
	sent := sources * len(connect)
	if in > AmplificationFactor*sent {
		t.Errorf("%d sources sent %d bytes and got %d back (%.1f×), want at most %d×", sources, sent, in, float64(in)/float64(sent), AmplificationFactor)
	}
	st := s.Stats()
	if in == 0 || st.Drops["amplification"] == 0 || st.Verified != 0 {
		t.Errorf("got %d bytes back, %d datagrams held back by the bound, %d verified: want an answer, the bound reached, none verified", in, st.Drops["amplification"], st.Verified)
	}

	c := dial(t, s, levconn.DriverOptions{})
	c.handshake()
	if v := s.Stats().Verified; v != 1 {
		t.Errorf("after a handshake %d connections verified, want 1", v)
	}
}
