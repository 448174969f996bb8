package main

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// bareRun is the bare Go lobby client the harness is measured against:
// n goroutines, each with one connected UDP socket, sending
// LOBBY_LIST_ROOMS back to back (one in flight, 100 ms to give up on a lost
// one) and counting replies that carry its sequence id. It checks nothing
// else: the least a Go client can do per request. It returns the replies
// per second.
func bareRun(n int, d time.Duration, lobby netip.AddrPort) (float64, error) {
	sources := engine.DefaultSources(n)
	conns := make([]*net.UDPConn, n)
	for i := range conns {
		la := net.UDPAddrFromAddrPort(netip.AddrPortFrom(sources[i%len(sources)], 0))
		c, err := net.DialUDP("udp", la, net.UDPAddrFromAddrPort(lobby))
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
				out = udplobby.AppendListRooms(out[:0], udplobby.ProfileSpec, seq)
				if _, err := c.Write(out); err != nil {
					break
				}
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				k, err := c.Read(in)
				if err != nil {
					continue
				}
				if h, err := udplobby.DecodeHeader(in[:k], udplobby.ProfileSpec); err == nil &&
					h.Type == udplobby.LobbyRoomList && h.Seq == seq {
					ok++
				}
			}
			total.Add(ok)
		}()
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}
