package main

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// bareRun is the bare Go lobby client the harness is measured against:
// n goroutines, each with one UDP socket, sending LOBBY_LIST_ROOMS back to
// back (one in flight, 100 ms to give up on a lost one) and counting
// replies that carry its sequence id. It checks nothing else: the least a
// Go client can do per request. With connected, each socket is connected
// to the lobby (send/read; the kernel drops datagrams from any other
// source); without, it is unconnected as lobbybench's are (sendto/recvmsg,
// so a reply from another port of the host would be seen), which tells the
// socket mode's cost from the harness's own. It returns the replies per
// second.
func bareRun(n int, d time.Duration, lobby netip.AddrPort, connected bool) (float64, error) {
	sources := netrange.DefaultSources(lobby.Addr(), netrange.ForClients(n))
	if len(sources) == 0 {
		sources = []netip.Addr{netip.IPv4Unspecified()} // not loopback: the system chooses
	}
	conns := make([]*net.UDPConn, n)
	for i := range conns {
		la := net.UDPAddrFromAddrPort(netip.AddrPortFrom(sources[i%len(sources)], 0))
		var c *net.UDPConn
		var err error
		if connected {
			c, err = net.DialUDP("udp", la, net.UDPAddrFromAddrPort(lobby))
		} else {
			c, err = net.ListenUDP("udp", la)
		}
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return 0, err
		}
		conns[i] = c
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			out, in := make([]byte, 0, 16), make([]byte, 2048)
			var ok int64
			for seq := uint16(1); time.Now().Before(deadline); seq++ {
				out = udpwire.AppendListRooms(out[:0], udpwire.ProfileSpec, seq)
				var err error
				if connected {
					_, err = c.Write(out)
				} else {
					_, err = c.WriteToUDPAddrPort(out, lobby)
				}
				if err != nil {
					break
				}
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				var k int
				if connected {
					k, err = c.Read(in)
				} else {
					k, _, _, _, err = c.ReadMsgUDPAddrPort(in, nil)
				}
				if err != nil {
					continue
				}
				if h, err := udpwire.DecodeHeader(in[:k], udpwire.ProfileSpec); err == nil &&
					h.Type == udpwire.LobbyRoomList && h.Seq == seq {
					ok++
				}
			}
			total.Add(ok)
		}()
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}
