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
		ID: "tcp-lobby/R/1", Protocol: ProtoTCP, Section: secTCPRobust, Level: conformance.Should,
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
	slow, err := dialTCPRead(t, 4096)
	if err != nil {
		return err
	}
	defer slow.Close()
	slow.c.SetReadBuffer(4096) // where the Dialer could not (not Linux)
	if _, _, err := slow.join(ack.RoomID); err != nil {
		return conformance.Precondition("the slow reader joins", err)
	}
	// From here the slow reader reads nothing. A goroutine reads the host's
	// frames and counts its PLAYER_READY echoes.
	var echoes atomic.Int64
	readerDone := make(chan error, 1)
	host.c.SetReadDeadline(time.Time{})
	go func() {
		var hdr [4]byte
		buf := make([]byte, maxTCPFrameLen)
		for {
			if _, err := io.ReadFull(host.c, hdr[:]); err != nil {
				readerDone <- err
				return
			}
			n := binary.LittleEndian.Uint32(hdr[:])
			if n > maxTCPFrameLen {
				readerDone <- fmt.Errorf("length prefix %d", n)
				return
			}
			if _, err := io.ReadFull(host.c, buf[:n]); err != nil {
				readerDone <- err
				return
			}
			if n > 0 && tcpwire.Type(buf[0]) == tcpwire.TypePlayerReady {
				echoes.Add(1)
			}
		}
	}()
	t.LogSent(host.local, host.peer, tcpwire.AppendFrame(nil, &tcpwire.ReadyReq{}),
		fmt.Sprintf("READY_REQ, repeated up to %d times (toggling) in batches of %d", slowReaderToggles, slowReaderBatch))
	pumpDone := make(chan struct{})
	sent := 0
	var pumpErr error
	go func() {
		defer close(pumpDone)
		var batch []byte
		for i := 0; i < slowReaderBatch; i++ {
			batch = tcpwire.AppendFrame(batch, &tcpwire.ReadyReq{})
		}
		start := time.Now()
		for sent < slowReaderToggles && time.Since(start) < slowReaderMax && t.Ctx.Err() == nil {
			host.c.SetWriteDeadline(time.Now().Add(t.Env.Timeout))
			if _, err := host.c.Write(batch); err != nil {
				pumpErr = err
				return
			}
			sent += slowReaderBatch
			waitStart := time.Now()
			for echoes.Load() < int64(sent) {
				if time.Since(waitStart) > t.Env.Timeout {
					pumpErr = fmt.Errorf("the host's own PLAYER_READY echoes stalled: %d of %d after %v", echoes.Load(), sent, t.Env.Timeout)
					return
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	// The observer watches the whole flood (at most slowReaderMax), not
	// only its first second: under load the flood fills the slow
	// reader's buffers later.
	rtts, lost, err := observeUntil(t, 20, 50*time.Millisecond, pumpDone)
	<-pumpDone
	host.c.SetReadDeadline(time.Now())
	<-readerDone
	if err != nil {
		return err
	}
	t.Notef("%d READY_REQ sent by the host, %d PLAYER_READY echoes read by it", sent, echoes.Load())
	if pumpErr != nil && !errors.Is(pumpErr, net.ErrClosed) {
		return conformance.Failf("the host keeps being served while another member does not read", "%v", pumpErr)
	}
	return judgeObserver(t, rtts, lost, "while a room member does not read")
}
