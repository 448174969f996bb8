package udpcases

import (
	"fmt"
	"strings"
	"sync"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Datagrams from the lobby that are no message (parseRaw: shorter than
// header + CRC) are passed over where they come, the exchange waiting on
// for its reply, so that a lobby that sends junk before its replies is
// judged on those replies by every case, and for the junk once, by
// udp-lobby/3/5 after all of them, from this log.

// junkKept is how many junk datagrams the log describes (it counts all).
const junkKept = 4

// junkLog is a suite's record of what its lobby exchanges read.
type junkLog struct {
	mu    sync.Mutex
	read  int      // datagrams read from the lobby
	count int      // of them, no message
	junk  []string // the first junkKept, described
}

// junkLogs holds each suite's log, by its environment, until the suite
// ends.
var junkLogs sync.Map // *conformance.Env → *junkLog

func junkOf(env *conformance.Env) *junkLog {
	if v, ok := junkLogs.Load(env); ok {
		return v.(*junkLog)
	}
	v, loaded := junkLogs.LoadOrStore(env, &junkLog{})
	if !loaded {
		env.Cleanup(func() { junkLogs.Delete(env) })
	}
	return v.(*junkLog)
}

// note records a datagram read in reply to what, and whether it was a
// message.
func (l *junkLog) note(what string, b []byte, message bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.read++
	if message {
		return
	}
	l.count++
	if len(l.junk) < junkKept {
		l.junk = append(l.junk, fmt.Sprintf("a %d-byte datagram after %s: %s", len(b), what, conformance.HexShort(b)))
	}
}

func init() {
	addCase(&conformance.Case{
		ID: "udp-lobby/3/5", Protocol: ProtoUDP, Section: secPacket, Rule: string(udpwire.RuleShort), Level: conformance.Must,
		Phase:       conformance.PhaseReview,
		Desc:        "every datagram the lobby sends is a message: none shorter than header + CRC, before a reply or instead of one",
		Requirement: "A packet is malformed when it is shorter than the header and its CRC-32 trailer (udp-lobby.md §3.4); the lobby answers each request with a message",
		Run:         udpNoJunk,
	})
}

// udpNoJunk judges the junk every lobby exchange of the suite passed over.
func udpNoJunk(t *conformance.T) error {
	l := junkOf(t.Env)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read == 0 {
		return conformance.Skipf("no datagram from the lobby to look at")
	}
	if l.count > 0 {
		more := ""
		if l.count > len(l.junk) {
			more = fmt.Sprintf("; %d more", l.count-len(l.junk))
		}
		return conformance.Failf("only messages (header + payload + CRC)", "%d of the %d datagrams the lobby sent were no message: %s%s",
			l.count, l.read, strings.Join(l.junk, "; "), more)
	}
	t.Notef("%d datagrams from the lobby, every one a message", l.read)
	return nil
}
