package conformance

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
)

// tcpFault is one defect a frame-aware proxy in front of the reference TCP
// lobby injects into what clients receive.
type tcpFault struct {
	// filter rewrites a server→client payload; nil drops the frame.
	filter func(p []byte) []byte
	// globalWriteLock serialises every write to every client under one
	// lock with no deadline, as a naive server does: one client that stops
	// reading stalls everybody.
	globalWriteLock bool
	// globalReadLock reads every client's frames under one lock, held
	// from a frame's length prefix to its last byte, as a naive server
	// does: one client that sends half a frame stalls everybody.
	globalReadLock bool
	// readyDelay, when > 0, holds every READY_REQ that long before
	// relaying it: a server (or a machine) too slow for tcp-lobby/R/2's
	// flood to reach its volume in its time.
	readyDelay time.Duration
	// headerCounted writes the length prefix of the frames whose type
	// this names (when not 0) as the payload size plus 4, the payload
	// followed by 4 zero bytes: the prefix counts itself.
	headerCounted tcpwire.Type
	// roomQuota and connQuota, when > 0, are per-address quotas the
	// reference lacks: a client address holding roomQuota rooms gets
	// CREATE_ROOM_ACK RoomID 0, one holding connQuota connections has the
	// next closed at once.
	roomQuota, connQuota int
}

// baseline is the verdict a case gets through a proxy with f but no
// defect: the reference's (refTCPVerdict), but for the quotas f adds.
func (f tcpFault) baseline(id string) string {
	if (id == "tcp-lobby/R/3" && f.roomQuota > 0) || (id == "tcp-lobby/R/4" && f.connQuota > 0) {
		return result.VerdictPass
	}
	return refTCPVerdict(id)
}

// startTCPProxy listens on a free loopback port and relays every
// connection to upstream, passing client bytes through and server frames
// through f.
func startTCPProxy(t *testing.T, upstream string, f tcpFault) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	var writeLock, readLock sync.Mutex
	// live and rooms are the connections and rooms each client address
	// holds (under mu), for the quotas.
	live, rooms := map[string]int{}, map[string]int{}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			ip := cc.RemoteAddr().(*net.TCPAddr).IP.String()
			mu.Lock()
			over := f.connQuota > 0 && live[ip] >= f.connQuota
			if !over {
				live[ip]++
			}
			mu.Unlock()
			if over {
				cc.Close()
				continue
			}
			uc, err := net.Dial("tcp", upstream)
			if err != nil {
				cc.Close()
				mu.Lock()
				live[ip]--
				mu.Unlock()
				continue
			}
			// A writer for every client stalls once one client's path
			// is full: a 4 KiB buffer toward each client (and the slow
			// reader's own) fill with a few hundred of tcp-lobby/R/2's
			// toggles. 16 KiB took more than the 352 toggles the case
			// could send in its 3 s under the race detector beside two
			// busy loops, and the defect went unseen; on a noisier
			// machine 4 KiB went unseen too (96 toggles sent), so the
			// lock's fault takes the kernel's smallest buffer (about
			// 4.5 KiB once doubled and clamped, asked 1 byte).
			wbuf := 16 << 10
			if f.globalWriteLock {
				wbuf = 1
			}
			cc.(*net.TCPConn).SetWriteBuffer(wbuf)
			mu.Lock()
			conns = append(conns, cc, uc)
			mu.Unlock()
			wg.Add(2)
			go func() { // client → server, untouched
				defer wg.Done()
				if f.globalReadLock || f.readyDelay > 0 {
					relayFrames(uc, cc, f, &readLock)
				}
				io.Copy(uc, cc)
				uc.(*net.TCPConn).CloseWrite()
			}()
			go func() { // server → client, frame by frame
				defer wg.Done()
				defer cc.Close()
				held := 0
				defer func() {
					mu.Lock()
					live[ip]--
					rooms[ip] -= held
					mu.Unlock()
				}()
				var hdr [4]byte
				for {
					if _, err := io.ReadFull(uc, hdr[:]); err != nil {
						return
					}
					p := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
					if _, err := io.ReadFull(uc, p); err != nil {
						return
					}
					if f.filter != nil {
						if p = f.filter(p); p == nil {
							continue
						}
					}
					if f.roomQuota > 0 && typeIs(p, tcpwire.TypeCreateRoomAck) && len(p) == tcpwire.SizeCreateRoomAck && binary.LittleEndian.Uint32(p[1:]) != 0 {
						mu.Lock()
						if rooms[ip] >= f.roomQuota {
							clear(p[1:]) // RoomID 0, PlayerHash 0
						} else {
							rooms[ip]++
							held++
						}
						mu.Unlock()
					}
					out := append(binary.LittleEndian.AppendUint32(nil, uint32(len(p))), p...)
					if f.headerCounted != 0 && typeIs(p, f.headerCounted) {
						out = append(binary.LittleEndian.AppendUint32(nil, uint32(len(p)+4)), append(p, 0, 0, 0, 0)...)
					}
					if f.globalWriteLock {
						writeLock.Lock()
					}
					_, err := cc.Write(out)
					if f.globalWriteLock {
						writeLock.Unlock()
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// typeIs reports whether the TCP lobby payload p is of type typ.
func typeIs(p []byte, typ tcpwire.Type) bool { return len(p) > 0 && tcpwire.Type(p[0]) == typ }

// tcpFaultRow is one defect the proxy injects and what the suite must make
// of it.
type tcpFaultRow struct {
	name    string
	f       tcpFault
	caught  []string
	mayskip []string
	// warn: the caught cases warn (the decisions accept a substitute).
	warn bool
	// inconclusive are cases that must be skipped as inconclusive: the
	// fault keeps them from producing what they test.
	inconclusive []string
}

func init() {
	addFaultTable(protoTCP, func() FaultRows {
		rows := FaultRows{}
		for _, r := range tcpFaultRows {
			rows["TestTCPFaultInjection/"+r.name] = r.caught
		}
		return rows
	})
}

// tcpFaultRows are TestTCPFaultInjection's defects; TestFaultCoverage
// reads their caught patterns.
var tcpFaultRows = []tcpFaultRow{
	// The reference has no per-address quotas: R/3 and R/4 warn, and pass
	// once the proxy adds them.
	{"transparent proxy", tcpFault{}, []string{"tcp-lobby/R/3", "tcp-lobby/R/4"}, nil, false, nil},
	{"per-address quotas", tcpFault{roomQuota: 4, connQuota: 16}, nil, nil, false, nil},
	{"no ERROR_MSG before closing on a bad frame", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeErrorMsg) && len(p) > 1 && p[1] == byte(tcpwire.ErrCodeServerError) {
			return nil
		}
		return p
	}}, []string{"tcp-lobby/7.1"}, nil, false, nil},
	{"non-host START answered 0x04", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeErrorMsg) && len(p) > 1 && p[1] == byte(tcpwire.ErrCodeNotHost) {
			p[1] = byte(tcpwire.ErrCodeNotAllReady)
		}
		return p
	}}, []string{"tcp-lobby/5.4/1"}, nil, false, nil},
	{"PLAYER_JOIN never sent", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypePlayerJoin) {
			return nil
		}
		return p
	}}, []string{"tcp-lobby/5.3/2"}, nil, true, nil}, // ROOM_UPDATE still sent: a warning
	{"COUNTDOWN 2 skipped", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeCountdown) && len(p) == 2 && p[1] == 2 {
			return nil
		}
		return p
	}}, []string{"tcp-lobby/6.3/1"}, nil, false, nil},
	{"GAME_START one byte too long", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeGameStart) {
			return append(p, 0)
		}
		return p
	}}, []string{"tcp-lobby/A/1", "tcp-lobby/6.3/1"}, []string{"tcp-lobby/6.3/2"}, false, nil},
	{"one writer for every client (a slow reader stalls all)", tcpFault{globalWriteLock: true}, []string{"tcp-lobby/R/2"}, nil, false, nil},
	// READY_REQ relayed one per 50 ms: tcp-lobby/R/2's flood owes the
	// slow reader at most 60 toggles' bytes in its 3 s, short of its
	// volume. Nothing stalls, but the case must not pass: inconclusive.
	{name: "READY_REQ held 50 ms (the flood cannot reach its volume)", f: tcpFault{readyDelay: 50 * time.Millisecond},
		inconclusive: []string{"tcp-lobby/R/2"}},
	// The quirky lobby: CONNECT_REQ not implemented (tcp-lobby.md §5.2 calls it an
	// alternative to the join flow: a warning).
	{"quirk: CONNECT_REQ ignored", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeConnectAck) {
			return nil
		}
		return p
	}}, []string{"tcp-lobby/5.2/1"}, nil, true, nil},
	// The quirky lobby's short ACKs (a real server's): the fields the
	// flow needs are there, so only the cases owning the layout fail.
	{"quirk: CREATE_ROOM_ACK of 6 bytes (type, status, room id)", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeCreateRoomAck) && len(p) == 13 {
			status := byte(0)
			if binary.LittleEndian.Uint32(p[1:]) == 0 {
				status = 1
			}
			return append([]byte{p[0], status}, p[1:5]...)
		}
		return p
	}}, []string{"tcp-lobby/5.1/2", "tcp-lobby/A/1"}, nil, false, nil},
	{"quirk: JOIN_ROOM_ACK of 2 bytes (type, status)", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeJoinRoomAck) {
			return p[:min(len(p), 2)]
		}
		return p
	}}, []string{"tcp-lobby/5.1/3", "tcp-lobby/A/1"}, nil, false, nil},
	{"missing room answered ROOM_FULL", tcpFault{filter: joinStatusAs(tcpwire.JoinRoomNotFound, tcpwire.JoinRoomFull)},
		[]string{"tcp-lobby/5.1/4"}, nil, false, nil},
	{"full room answered ROOM_NOT_FOUND", tcpFault{filter: joinStatusAs(tcpwire.JoinRoomFull, tcpwire.JoinRoomNotFound)},
		[]string{"tcp-lobby/5.1/5"}, nil, false, nil},
	{"started room answered ROOM_FULL", tcpFault{filter: joinStatusAs(tcpwire.JoinRoomInGame, tcpwire.JoinRoomFull)},
		[]string{"tcp-lobby/5.1/6"}, nil, false, nil},
	{"START with a player not ready answered 0x03", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeErrorMsg) && len(p) > 1 && p[1] == byte(tcpwire.ErrCodeNotAllReady) {
			p[1] = byte(tcpwire.ErrCodeNotHost)
		}
		return p
	}}, []string{"tcp-lobby/5.4/2"}, nil, false, nil},
	{"PLAYER_LEFT never sent", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypePlayerLeft) {
			return nil
		}
		return p
	}}, []string{"tcp-lobby/6.4/1"}, nil, false, nil},
	// Dropping PLAYER_READY would starve every flow that waits for it
	// (5.4, R/2); a wrong Ready byte is seen by its owner alone. The
	// reference also sends ROOM_UPDATE, which the decisions accept in its
	// place: a warning, as for PLAYER_JOIN.
	{"PLAYER_READY says Ready 0", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypePlayerReady) && len(p) == 10 {
			p[9] = 0
		}
		return p
	}}, []string{"tcp-lobby/5.3/1"}, nil, true, nil},
	// GAME_START names a port nothing listens on: the frame keeps its
	// Appendix A size, only the hand-over fails.
	{"GAME_START names a dead UDP port", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeGameStart) && len(p) >= 1+tcpwire.IPSize+2 {
			binary.LittleEndian.PutUint16(p[1+tcpwire.IPSize:], 1)
		}
		return p
	}}, []string{"tcp-lobby/6.3/2"}, nil, false, nil},
	// A hostile lobby aims its clients at a third party (192.0.2.1,
	// TEST-NET-1): tcp-lobby/6.3/1 fails the GAME_START and 6.3/2 skips
	// without sending anything there (TestTCPFaultInjection checks every
	// wire log).
	{"GAME_START names another host", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeGameStart) && len(p) >= 1+tcpwire.IPSize+2 {
			ip := tcpwire.MakeIP(redirectVictim)
			copy(p[1:], ip[:])
		}
		return p
	}}, []string{"tcp-lobby/6.3/1"}, []string{"tcp-lobby/6.3/2"}, false, nil},
	// A server that has 16 rooms still hands out a RoomID.
	{"CREATE_ROOM_ACK RoomID never 0", tcpFault{filter: func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeCreateRoomAck) && len(p) >= 5 && binary.LittleEndian.Uint32(p[1:]) == 0 {
			binary.LittleEndian.PutUint32(p[1:], 0x7FFFFFFE)
		}
		return p
	}}, []string{"tcp-lobby/5.1/7"}, nil, false, nil},
	{"one reader for every client (half a frame stalls all)", tcpFault{globalReadLock: true}, []string{"tcp-lobby/R/1"}, nil, false, nil},
	// A room entry whose InGame byte is 2: the frame keeps its size
	// (tcp-lobby/2.2/1 passes) but the list does not decode; the cases
	// that read the list to go on skip, naming tcp-lobby/5.1/1.
	{"LIST_ROOMS_ACK room entry with InGame 2", tcpFault{filter: func(p []byte) []byte {
		if !typeIs(p, tcpwire.TypeListRoomsAck) || len(p) < 2 || p[1] >= tcpwire.MaxRooms {
			return p
		}
		room := make([]byte, tcpwire.RoomInfoSize)
		binary.LittleEndian.PutUint32(room, 0x7FFF0000)
		copy(room[4:], "bad")
		room[36], room[37], room[38] = 0, tcpwire.MaxPlayers, 2
		p[1]++
		return append(p, room...)
	}}, []string{"tcp-lobby/5.1/1"}, []string{"tcp-lobby/5.1/4", "tcp-lobby/R/3"}, false, nil},
	// The prefix of LIST_ROOMS_ACK counts itself. tcp-lobby/5.1/1 fails
	// too: it reads the same frame and finds 4 bytes too many, the same
	// defect seen from the message's side.
	{"LIST_ROOMS_ACK length prefix counts the header", tcpFault{headerCounted: tcpwire.TypeListRoomsAck},
		[]string{"tcp-lobby/2.2/1", "tcp-lobby/5.1/1"}, []string{"tcp-lobby/5.1/4", "tcp-lobby/R/3"}, false, nil},
}

// redirectVictim is the host a hostile GAME_START names: TEST-NET-1, which
// the suite must never send to.
const redirectVictim = "192.0.2.1"

// joinStatusAs rewrites JOIN_ROOM_ACK status from into to: a server that
// refuses a join for the wrong reason.
func joinStatusAs(from, to tcpwire.JoinStatus) func(p []byte) []byte {
	return func(p []byte) []byte {
		if typeIs(p, tcpwire.TypeJoinRoomAck) && len(p) > 1 && p[1] == byte(from) {
			p[1] = byte(to)
		}
		return p
	}
}

// relayFrames relays client frames from cc to uc, frame by frame: with
// f.globalReadLock each frame's payload is read under lock, and with
// f.readyDelay each READY_REQ is held that long. It returns at the first
// frame it will not read whole (empty or longer than 4096 bytes: its
// prefix is relayed, the rest is the caller's to copy) or at an error.
func relayFrames(uc, cc net.Conn, f tcpFault, lock *sync.Mutex) {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(cc, hdr[:]); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(hdr[:])
		if n == 0 || n > tcpwire.DefaultMaxFrame {
			uc.Write(hdr[:])
			return
		}
		p := make([]byte, 4+n)
		copy(p, hdr[:])
		if f.globalReadLock {
			lock.Lock()
		}
		_, err := io.ReadFull(cc, p[4:])
		if f.globalReadLock {
			lock.Unlock()
		}
		if err != nil {
			return
		}
		if f.readyDelay > 0 && typeIs(p[4:], tcpwire.TypeReadyReq) {
			time.Sleep(f.readyDelay)
		}
		if _, err := uc.Write(p); err != nil {
			return
		}
	}
}

// TestTCPFaultInjection runs the TCP suite through the proxy: transparent
// first (every case passes), then with one defect at a time, each caught
// by the case meant for it and by no other.
func TestTCPFaultInjection(t *testing.T) {
	t.Parallel() // its suites mostly wait, as TestFaultInjection's
	// A generous timeout: the suites run at once on a small machine, and
	// tcp-lobby/R/2 judges a stall by it.
	cfg := func(target string) Config {
		return Config{Target: target, Protocol: protoTCP, Timeout: 3 * time.Second}
	}
	tests := tcpFaultRows
	cfgs := make([]Config, len(tests))
	for i, tt := range tests {
		if !rowSelected(tt.name) {
			continue
		}
		srv := startRef(t)
		cfgs[i] = cfg(startTCPProxy(t, srv.Addr(tcpwire.ProtocolName).String(), tt.f))
	}
	reps, errs := runSuites(cfgs)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !rowSelected(tt.name) {
				t.Skip("not selected by -faultrows")
			}
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			skips := 0
			for _, x := range reps[i].Cases {
				id := x.ID
				for _, w := range x.Wire {
					if w.Dir == result.DirSent && strings.HasPrefix(w.Peer, redirectVictim+":") {
						t.Errorf("%s sent a datagram to %s, the host a GAME_START named", id, w.Peer)
					}
				}
				if x.Verdict == result.VerdictSkip {
					skips++
				}
				switch {
				case matchAny(tt.inconclusive, id):
					if !isInconclusive(x) {
						t.Errorf("%s is %v (%s), want skipped as inconclusive", id, x.Verdict, x.Actual)
					}
				case unmeasured(t, x):
				case matchAny(tt.caught, id):
					want := result.VerdictFail
					if x.Level == result.LevelShould || tt.warn {
						want = result.VerdictWarn
					}
					if x.Verdict != want {
						t.Errorf("%s is %v, want %v (the case meant for this defect)", id, x.Verdict, want)
					}
				case matchAny(tt.mayskip, id) && x.Verdict == result.VerdictSkip:
				case x.Verdict != tt.f.baseline(id):
					t.Errorf("%s is %v (%s: %s): an unrelated case changed", id, x.Verdict, x.Expected, x.Actual)
				}
			}
			if n := len(reps[i].Cases); skips > n/4 {
				t.Errorf("%d of %d cases skipped, want at most a quarter", skips, n)
			}
			if t.Failed() {
				logReport(t, reps[i])
			}
		})
	}
}
