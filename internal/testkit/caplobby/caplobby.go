// Package caplobby is a udp-lobby of known capacity, for the tests of
// `lobbybench capacity` (package capacity's, and the command's with
// --workers and --shard): it answers LOBBY_LIST_ROOMS at most a given
// rate, and can break a protocol rule above another. Only tests import
// it (it takes their T as TB, without importing testing).
package caplobby

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Lobby answers LOBBY_LIST_ROOMS (an empty list) at most CapPerSec a
// second, dropping the rest, and, when BreakAbove > 0, answers with a
// packet of packetType 3 (U-PACKET-TYPE: BadReply) whenever more than
// BreakAbove a second came in over the last second.
type Lobby struct {
	CapPerSec, BreakAbove float64
	// Burst is how many requests are answered at once after an idle
	// spell (default 2: the engine's reachability check and the first
	// session; a run of several processes starts with one check each).
	Burst float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
	recent []time.Time
}

// Window is what a Lobby measures its rate over.
const Window = time.Second

// idle is the pause after which a Lobby's token bucket starts afresh:
// below the half second between a --workers step's reachability checks
// and its load (the workers' start gate), so that every step starts from
// Burst; a bucket refilled over that gap instead answered a few a second
// more than CapPerSec over a 2 s step.
const idle = 300 * time.Millisecond

func (l *Lobby) admit(now time.Time) (answer, bad bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.BreakAbove > 0 {
		cut := 0
		for cut < len(l.recent) && now.Sub(l.recent[cut]) > Window {
			cut++
		}
		l.recent = append(l.recent[cut:], now)
		bad = float64(len(l.recent)) > l.BreakAbove*Window.Seconds()
	}
	if l.CapPerSec <= 0 {
		return true, bad
	}
	// Tokens accrue at CapPerSec from the first request after an idle
	// spell (between steps), up to half a second's worth: a stalled,
	// then hurried, harness is not punished, and over a step no more
	// than CapPerSec a second (and two) are answered.
	if l.last.IsZero() || now.Sub(l.last) > idle {
		l.tokens = l.Burst
		if l.Burst <= 0 {
			l.tokens = 2 // the engine's reachability check, and the first session
		}
	} else {
		l.tokens = min(l.CapPerSec/2, l.tokens+now.Sub(l.last).Seconds()*l.CapPerSec)
	}
	l.last = now
	if l.tokens < 1 {
		return false, bad
	}
	l.tokens--
	return true, bad
}

// Busy is how many requests came in over the last Window (counted only
// when BreakAbove is set): what a test lists as the lobby's "rooms", so
// that a search drains it between steps.
func (l *Lobby) Busy() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.recent {
		if time.Since(at) <= Window {
			n++
		}
	}
	return n
}

// TB is what Start needs of a test (*testing.T).
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Start serves on a free loopback port until the test ends.
func (l *Lobby) Start(t TB) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { c.Close(); <-done })
	go func() {
		defer close(done)
		dec := udpwire.Decoder{Profile: udpwire.ProfileSpec, Dir: udpwire.ClientToServer}
		buf := make([]byte, 2048)
		var m udpwire.Message
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if dec.Decode(buf[:n], &m) != nil || m.Type != udpwire.LobbyListRooms {
				continue
			}
			answer, bad := l.admit(time.Now())
			if !answer {
				continue
			}
			reply := udpwire.Message{Header: udpwire.Header{PacketType: 2, Type: udpwire.LobbyRoomList, Seq: m.Seq}}
			out, err := udpwire.Append(nil, udpwire.ProfileSpec, &reply)
			if err != nil {
				continue
			}
			if bad {
				out = BadReply(m.Seq)
			}
			c.WriteToUDPAddrPort(out, from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// BadReply is a LOBBY_ROOM_LIST of packetType 3, which no server may
// send.
func BadReply(seq uint16) []byte {
	return udpwire.AppendRaw(nil, udpwire.ProfileSpec, udpwire.Header{PacketType: 3, Type: udpwire.LobbyRoomList, Seq: seq, PayloadSize: 2, OriginalSize: 2}, []byte{0, 0})
}
