package tcpcases

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// Robustness of the TCP lobby: one client must not stall the others. The
// RFC does not state it; tcp-lobby.md §R asks for it as a SHOULD, so these are warnings.

func init() {
	addCase(&conformance.Case{
		// Serial: against a server it stalls, every case running beside
		// it would be stalled too, and fail for R/1's finding.
		ID: "tcp-lobby/R/1", Protocol: ProtoTCP, Section: secTCPRobust, Level: conformance.Should, Phase: conformance.PhaseSerial,
		Desc:        "a client that sent half a frame and stopped does not stall the others",
		Requirement: "slow-reader and half-frame clients do not stall other clients; a slow or stuck client never blocks the others",
		Run: func(t *conformance.T) error {
			half, err := dialTCP(t)
			if err != nil {
				return err
			}
			defer half.Close()
			// JOIN_ROOM_REQ announces 37 bytes; send 5 of them.
			b := binary.LittleEndian.AppendUint32(nil, tcpwire.SizeJoinRoomReq)
			b = append(b, byte(tcpwire.TypeJoinRoomReq), 1, 0, 0, 0)
			if err := half.sendRaw(b, "half a JOIN_ROOM_REQ, then nothing"); err != nil {
				return err
			}
			rtts, lost, err := observe(t, 10, 20*time.Millisecond)
			if err != nil {
				return err
			}
			return judgeObserver(t, rtts, lost, "while a client sits on half a frame")
		},
	})
	addCase(&conformance.Case{
		ID: "tcp-lobby/R/2", Protocol: ProtoTCP, Section: secTCPRobust, Level: conformance.Should, Phase: conformance.PhaseSerial,
		Desc:        "a room member that never reads, flooded with broadcasts, does not stall the others",
		Requirement: "slow-reader and half-frame clients do not stall other clients; a client that stops reading is disconnected, not buffered forever",
		Run:         tcpSlowReader,
	})
}

// observe sends n LIST_ROOMS_REQ from a fresh connection, one every gap,
// and returns the round trips and how many went unanswered.
func observe(t *conformance.T, n int, gap time.Duration) ([]time.Duration, int, error) {
	return observeUntil(t, n, gap, nil)
}

// observeUntil is observe that, once its n requests are sent, goes on
// until more is closed (nil: it does not), so that it watches the whole
// of what it observes: a flood that takes longer to fill a slow reader's
// buffers (a loaded machine, a slower server) still meets an observer.
func observeUntil(t *conformance.T, n int, gap time.Duration, more <-chan struct{}) ([]time.Duration, int, error) {
	o, err := dialTCP(t)
	if err != nil {
		return nil, 0, err
	}
	defer o.Close()
	var rtts []time.Duration
	lost := 0
	for i := 0; i < n || more != nil && !closed(more); i++ {
		start := time.Now()
		_, err := o.request(&tcpwire.ListRoomsReq{}, tcpwire.TypeListRoomsAck)
		switch {
		case err == nil:
			rtts = append(rtts, time.Since(start))
		case errors.Is(err, conformance.ErrSilence):
			lost++
			if lost >= 2 {
				return rtts, lost, nil // stalled: no need to wait out the rest
			}
		case errors.Is(err, errClosed):
			return rtts, lost + max(n-i, 1), nil
		default:
			return nil, 0, err
		}
		if t.Sleep(gap) != nil {
			break
		}
	}
	return rtts, lost, nil
}

// closed reports whether c is closed.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func judgeObserver(t *conformance.T, rtts []time.Duration, lost int, while string) error {
	if lost > 0 {
		return conformance.Failf("every LIST_ROOMS_REQ of another client answered "+while,
			"%d of %d unanswered within %v", lost, lost+len(rtts), t.Env.Timeout)
	}
	if len(rtts) == 0 {
		return conformance.Skipf("the observer made no request")
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	t.Notef("another client's LIST round trip %s: median %v, max %v over %d requests", while,
		rtts[len(rtts)/2].Round(time.Microsecond), rtts[len(rtts)-1].Round(time.Microsecond), len(rtts))
	return nil
}

// slowReaderToggles bounds the ready toggles that flood the slow reader
// (each sends it a PLAYER_READY and a ROOM_UPDATE, ~100 bytes): enough to
// fill its socket buffers and the server's send buffer several MiB deep.
// The host toggles in small batches and waits for its own PLAYER_READY
// echoes before the next, so that it is never the slow client itself.
const (
	slowReaderToggles = 40000
	slowReaderBatch   = 16
	slowReaderMax     = 3 * time.Second
	// slowReaderRcvBuf is the receive buffer the slow reader asks for,
	// from its handshake on.
	slowReaderRcvBuf = 4096
	// slowReaderVolume is the least the flood must make the server send
	// the slow reader before a pass means anything: its receive buffer
	// (twice what it asked for, as Linux grants it) and a server's send
	// buffer toward it at Linux's default (tcp_wmem, 16 KiB). Short of
	// it, a server that blocks on a full client may never have blocked:
	// no stall seen proves nothing, and the case is inconclusive.
	slowReaderVolume = 2*slowReaderRcvBuf + 16<<10
)

func tcpSlowReader(t *conformance.T) error {
	host, ack, err := newRoom(t)
	if err != nil {
		return err
	}
	defer host.Close()
	// Its receive buffer small from the handshake on: shrunk after it,
	// the window already advertised absorbed a flood that the race
	// detector slowed to a few hundred toggles.
	slow, err := dialTCPRead(t, slowReaderRcvBuf)
	if err != nil {
		return err
	}
	defer slow.Close()
	slow.c.SetReadBuffer(slowReaderRcvBuf) // where the Dialer could not (not Linux)
	if _, _, err := slow.join(ack.RoomID); err != nil {
		return conformance.Precondition("the slow reader joins", err)
	}
	// From here the slow reader reads nothing. The host's frames are the
	// room's broadcasts, which the slow reader is sent too.
	hr := readHost(host)
	t.LogSent(host.local, host.peer, tcpwire.AppendFrame(nil, &tcpwire.ReadyReq{}),
		fmt.Sprintf("READY_REQ, repeated up to %d times (toggling) in batches of %d", slowReaderToggles, slowReaderBatch))
	pumpDone := make(chan struct{})
	var sent int
	var pumpErr error
	go func() {
		defer close(pumpDone)
		sent, pumpErr = pumpReady(t, host, &hr.echoes)
	}()
	// The observer watches the whole flood (at most slowReaderMax), not
	// only its first second: under load the flood fills the slow
	// reader's buffers later.
	rtts, lost, err := observeUntil(t, 20, 50*time.Millisecond, pumpDone)
	<-pumpDone
	host.c.SetReadDeadline(time.Now())
	<-hr.done
	if err != nil {
		return err
	}
	owed := hr.bytes.Load()
	t.Notef("%d READY_REQ sent by the host, %d PLAYER_READY echoes read by it; %d bytes of broadcasts sent to each member", sent, hr.echoes.Load(), owed)
	if pumpErr != nil && !errors.Is(pumpErr, net.ErrClosed) {
		return conformance.Failf("the host keeps being served while another member does not read", "%v", pumpErr)
	}
	if lost == 0 && owed < slowReaderVolume {
		return conformance.Inconclusivef("the flood made the server send the member that does not read %d bytes (%d READY_REQ toggles), short of the %d it takes to fill that member's receive buffer and a server's send buffer toward it (this machine too busy, or the server too slow, to flood it in %v): a server that stalls on a full client was not put to the test",
			owed, sent, slowReaderVolume, slowReaderMax)
	}
	return judgeObserver(t, rtts, lost, "while a room member does not read")
}

// hostReader reads the host's frames in the background: it counts the
// bytes read (the room's broadcasts) and the host's PLAYER_READY echoes,
// until done is sent the read's end.
type hostReader struct {
	echoes, bytes atomic.Int64
	done          chan error
}

func readHost(host *tcpClient) *hostReader {
	hr := &hostReader{done: make(chan error, 1)}
	host.c.SetReadDeadline(time.Time{})
	go func() {
		var hdr [4]byte
		buf := make([]byte, maxTCPFrameLen)
		for {
			if _, err := io.ReadFull(host.c, hdr[:]); err != nil {
				hr.done <- err
				return
			}
			n := binary.LittleEndian.Uint32(hdr[:])
			if n > maxTCPFrameLen {
				hr.done <- fmt.Errorf("length prefix %d", n)
				return
			}
			if _, err := io.ReadFull(host.c, buf[:n]); err != nil {
				hr.done <- err
				return
			}
			hr.bytes.Add(int64(len(hdr) + int(n)))
			if n > 0 && tcpwire.Type(buf[0]) == tcpwire.TypePlayerReady {
				hr.echoes.Add(1)
			}
		}
	}()
	return hr
}

// pumpReady toggles the host's ready state in batches, each once the
// echoes of the last came back, until slowReaderToggles, slowReaderMax
// or the run's end; it returns the READY_REQ sent and why it stopped
// early (a write that failed, echoes that stalled).
func pumpReady(t *conformance.T, host *tcpClient, echoes *atomic.Int64) (int, error) {
	var batch []byte
	for i := 0; i < slowReaderBatch; i++ {
		batch = tcpwire.AppendFrame(batch, &tcpwire.ReadyReq{})
	}
	sent := 0
	start := time.Now()
	for sent < slowReaderToggles && time.Since(start) < slowReaderMax && t.Ctx.Err() == nil {
		host.c.SetWriteDeadline(time.Now().Add(t.Env.Timeout))
		if _, err := host.c.Write(batch); err != nil {
			return sent, err
		}
		sent += slowReaderBatch
		waitStart := time.Now()
		for echoes.Load() < int64(sent) {
			if time.Since(waitStart) > t.Env.Timeout {
				return sent, fmt.Errorf("the host's own PLAYER_READY echoes stalled: %d of %d after %v", echoes.Load(), sent, t.Env.Timeout)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	return sent, nil
}
