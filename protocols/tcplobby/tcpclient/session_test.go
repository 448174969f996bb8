package tcpclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/metrics"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

func plan(t testing.TB, extra, flows string) *scenario.Plan {
	t.Helper()
	y := "protocol: tcp-lobby\nload: {clients: 1, duration: 10s}\n" + extra + "\nflows:\n" + flows
	p, err := scenario.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("scenario:\n%s\n%v", y, err)
	}
	return p
}

type played struct {
	run  *result.Run
	errs []error
}

func (r played) step(t testing.TB, name string) result.Series {
	t.Helper()
	for _, s := range r.run.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q", name)
	return result.Series{}
}

func (r played) violations() map[string]int64 {
	m := map[string]int64{}
	for _, v := range r.run.Violations {
		m[v.Rule] = v.Count
	}
	return m
}

func runSessions(t testing.TB, p *scenario.Plan, target netip.AddrPort, n int) played {
	t.Helper()
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, target, c, simclient.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	f, ok := simclient.Lookup("tcp-lobby")
	if !ok {
		t.Fatal("tcp-lobby not registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		s, err := f(sh, i, &p.Flows[0], netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			errs[i] = s.Run(ctx, time.Time{})
		}()
	}
	wg.Wait()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return played{run: run, errs: errs}
}

func referenceServer(t testing.TB) netip.AddrPort {
	t.Helper()
	return startReference(t).Addr()
}

// startReference runs the reference TCP lobby on 127.0.0.1 port 0 for
// the test.
func startReference(t testing.TB) *tcpserver.Server {
	t.Helper()
	return startServer(t, func(*tcpserver.Config) {})
}

func TestFullMatchAgainstReference(t *testing.T) {
	addr := referenceServer(t)
	p := plan(t, "", `
  - name: match
    group_size: 4
    steps:
      - connect
      - list
      - create: {only: leader}
      - join: {room: created, only: members}
      - barrier: 4
      - ready
      - barrier: 4
      - start: {only: leader}
      - wait_countdown
      - wait_game_start
      - disconnect
`)
	r := runSessions(t, p, addr, 8)
	for i, err := range r.errs {
		if err != nil {
			t.Errorf("session %d: %v", i, err)
		}
	}
	if v := r.violations(); len(v) != 0 {
		t.Errorf("violations against the reference server: %v (%+v)", v, r.run.Violations)
	}
	for name, want := range map[string]int64{"connect": 8, "list": 8, "create": 2, "join": 6, "ready": 8, "start": 2,
		"wait_countdown": 8, "wait_game_start": 8, "disconnect": 8} {
		if got := r.step(t, name).Successes; got != want {
			t.Errorf("%s successes = %d, want %d", name, got, want)
		}
	}
}

// script is a fake TCP lobby: for each accepted connection it reads frames
// and answers each with what reply returns (raw frames, already framed).
func script(t testing.TB, reply func(req tcpwire.Message) [][]byte) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				fr := tcpwire.NewFrameReader(c, 0)
				for {
					p, err := fr.Next()
					if err != nil {
						return
					}
					m, err := tcpwire.Decode(p)
					if err != nil {
						c.Write(tcpwire.AppendFrame(nil, tcpwire.NewErrorMsg(6, err.Error())))
						return
					}
					for _, b := range reply(m) {
						if b == nil {
							return // close
						}
						c.Write(b)
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort()
}

func frame(m tcpwire.Message) []byte { return tcpwire.AppendFrame(nil, m) }

// rawFrame frames payload as it is, however malformed.
func rawFrame(payload ...byte) []byte {
	return append([]byte{byte(len(payload)), byte(len(payload) >> 8), 0, 0}, payload...)
}

// soloGame is a lobby whose room of one player (hash 7) starts a game on
// START_REQ: the countdown seconds given, then GAME_START naming ip:4000.
func soloGame(ip string, countdown ...uint8) func(req tcpwire.Message) [][]byte {
	return func(req tcpwire.Message) [][]byte {
		switch req.(type) {
		case *tcpwire.CreateRoomReq:
			return [][]byte{frame(&tcpwire.CreateRoomAck{RoomID: 3, PlayerHash: 7})}
		case *tcpwire.ReadyReq:
			return [][]byte{frame(&tcpwire.PlayerReady{PlayerHash: 7, Ready: true})}
		case *tcpwire.StartReq:
			var out [][]byte
			for _, sec := range countdown {
				out = append(out, frame(&tcpwire.Countdown{Seconds: sec}))
			}
			gs := &tcpwire.GameStart{ServerIP: tcpwire.MakeIP(ip), UDPPort: 4000, PlayerCount: 1}
			gs.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 7, Ready: true}
			return append(out, frame(gs))
		}
		return okConnect(req)
	}
}

// okConnect answers CONNECT_REQ (hash 7) and LIST_ROOMS_REQ (no rooms).
func okConnect(req tcpwire.Message) [][]byte {
	switch req.(type) {
	case *tcpwire.ConnectReq:
		return [][]byte{frame(&tcpwire.ConnectAck{Success: true, PlayerHash: 7})}
	case *tcpwire.ListRoomsReq:
		return [][]byte{frame(&tcpwire.ListRoomsAck{})}
	}
	return nil
}

func TestMisbehavingTCPLobby(t *testing.T) {
	tests := []struct {
		name     string
		flow     string
		extra    string // scenario keys
		reply    func(req tcpwire.Message) [][]byte
		wantRule string
		wantFail string
		failStep string
	}{
		{
			name: "connect refused by CONNECT_ACK",
			flow: "[connect]",
			reply: func(tcpwire.Message) [][]byte {
				return [][]byte{frame(&tcpwire.ConnectAck{Success: false})}
			},
			wantFail: simclient.ReasonRefused, failStep: "connect",
		},
		{
			name:  "hash 0 on success, fail_step",
			flow:  "[connect]",
			extra: "on_violation: fail_step",
			reply: func(tcpwire.Message) [][]byte {
				return [][]byte{frame(&tcpwire.ConnectAck{Success: true})}
			},
			wantRule: RuleTHash, wantFail: result.ReasonViolation, failStep: "connect",
		},
		{
			name: "hash 0 on success, continue",
			flow: "[connect, list]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.ConnectReq); ok {
					return [][]byte{frame(&tcpwire.ConnectAck{Success: true})}
				}
				return okConnect(req)
			},
			wantRule: RuleTHash,
		},
		{
			name: "6-byte CREATE_ROOM_ACK, continue",
			flow: "[connect, {create: r1}, ready]",
			reply: func(req tcpwire.Message) [][]byte {
				switch req.(type) {
				case *tcpwire.CreateRoomReq:
					return [][]byte{rawFrame(0x04, 0x00, 3, 0, 0, 0)} // Type, Status, RoomID 3
				case *tcpwire.ReadyReq:
					return [][]byte{frame(&tcpwire.PlayerReady{PlayerHash: 7, Ready: true})}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleSizeFixed,
		},
		{
			name:  "6-byte CREATE_ROOM_ACK, fail_step",
			flow:  "[connect, {create: r1}]",
			extra: "on_violation: fail_step",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.CreateRoomReq); ok {
					return [][]byte{rawFrame(0x04, 0x00, 3, 0, 0, 0)}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleSizeFixed, wantFail: result.ReasonViolation, failStep: "create",
		},
		{
			name: "2-byte JOIN_ROOM_ACK SUCCESS, continue",
			flow: "[connect, {join: 5}, ready]",
			reply: func(req tcpwire.Message) [][]byte {
				switch req.(type) {
				case *tcpwire.JoinRoomReq:
					return [][]byte{rawFrame(0x06, 0x00)}
				case *tcpwire.ReadyReq:
					return [][]byte{frame(&tcpwire.PlayerReady{PlayerHash: 9, Ready: true})}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleSizeCount,
		},
		{
			// The hash is learnt from ROOM_UPDATE by the client's name, so
			// a stranger's PLAYER_READY does not answer its READY_REQ.
			name: "2-byte JOIN_ROOM_ACK, hash learnt from ROOM_UPDATE",
			flow: "[connect, {join: 5}, ready]",
			reply: func(req tcpwire.Message) [][]byte {
				switch req.(type) {
				case *tcpwire.JoinRoomReq:
					u := &tcpwire.RoomUpdate{Count: 2}
					u.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 8, Name: tcpwire.MakeName("host")}
					u.Players[1] = tcpwire.PlayerInfo{Number: 2, Hash: 9, Name: tcpwire.MakeName("bot0")}
					return [][]byte{rawFrame(0x06, 0x00), frame(u)}
				case *tcpwire.ReadyReq:
					return [][]byte{frame(&tcpwire.PlayerReady{PlayerHash: 8, Ready: true})}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleSizeCount, wantFail: result.ReasonTimeout, failStep: "ready",
		},
		{
			name: "2-byte JOIN_ROOM_ACK ROOM_FULL is still a refusal",
			flow: "[connect, {join: 5}]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.JoinRoomReq); ok {
					return [][]byte{rawFrame(0x06, 0x01)}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleSizeCount, wantFail: result.ReasonJoinFailed, failStep: "join",
		},
		{
			name: "wrong reply type",
			flow: "[connect, list]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.ListRoomsReq); ok {
					return [][]byte{frame(&tcpwire.CreateRoomAck{RoomID: 1, PlayerHash: 1})}
				}
				return okConnect(req)
			},
			wantRule: RuleTReplyType, wantFail: result.ReasonTimeout, failStep: "list",
		},
		{
			name: "server sends a request type",
			flow: "[connect]",
			reply: func(req tcpwire.Message) [][]byte {
				return append([][]byte{frame(&tcpwire.StartReq{})}, okConnect(req)...)
			},
			wantRule: RuleTDirection,
		},
		{
			name: "broadcast about a stranger",
			flow: "[connect, {create: r1}, list]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.CreateRoomReq); ok {
					return [][]byte{frame(&tcpwire.CreateRoomAck{RoomID: 3, PlayerHash: 7}), frame(&tcpwire.PlayerLeft{PlayerHash: 99})}
				}
				return okConnect(req)
			},
			wantRule: RuleTBroadcast,
		},
		{
			name:     "countdown going up",
			flow:     "[connect, {create: r1}, ready, start, wait_game_start]",
			reply:    soloGame("127.0.0.1", 2, 3),
			wantRule: RuleTCountdown,
		},
		{
			// A hostile lobby aims its clients at a third party (TEST-NET-1):
			// reported, and nothing is sent there (the client never goes on
			// to the instance).
			name:     "game start naming another host",
			flow:     "[connect, {create: r1}, ready, start, wait_game_start]",
			reply:    soloGame("192.0.2.1", 1),
			wantRule: RuleTGameStartHost,
		},
		{
			name: "game start before a member was announced ready",
			flow: "[connect, {create: r1}, ready, start, wait_game_start]",
			reply: func(req tcpwire.Message) [][]byte {
				switch req.(type) {
				case *tcpwire.CreateRoomReq:
					pj := &tcpwire.PlayerJoin{Player: tcpwire.PlayerInfo{Number: 2, Hash: 8}}
					return [][]byte{frame(&tcpwire.CreateRoomAck{RoomID: 3, PlayerHash: 7}), frame(pj)}
				case *tcpwire.ReadyReq:
					return [][]byte{frame(&tcpwire.PlayerReady{PlayerHash: 7, Ready: true})}
				case *tcpwire.StartReq:
					gs := &tcpwire.GameStart{ServerIP: tcpwire.MakeIP("127.0.0.1"), UDPPort: 4000, PlayerCount: 2}
					gs.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 7, Ready: true}
					gs.Players[1] = tcpwire.PlayerInfo{Number: 2, Hash: 8, Ready: true}
					return [][]byte{frame(&tcpwire.Countdown{Seconds: 1}), frame(gs)}
				}
				return okConnect(req)
			},
			wantRule: RuleTBroadcast,
		},
		{
			name:  "join ack without the joiner",
			flow:  "[connect, {join: 5}]",
			extra: "on_violation: fail_step",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.JoinRoomReq); ok {
					a := &tcpwire.JoinRoomAck{Status: tcpwire.JoinSuccess, PlayerHash: 7, Count: 1}
					a.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 8}
					return [][]byte{frame(a)}
				}
				return okConnect(req)
			},
			wantRule: RuleTJoinAck, wantFail: result.ReasonViolation, failStep: "join",
		},
		{
			name: "join refused",
			flow: "[connect, {join: 5}]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.JoinRoomReq); ok {
					return [][]byte{frame(&tcpwire.JoinRoomAck{Status: tcpwire.JoinRoomNotFound})}
				}
				return okConnect(req)
			},
			wantFail: result.ReasonJoinFailed, failStep: "join",
		},
		{
			name: "server closes",
			flow: "[connect, list]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.ListRoomsReq); ok {
					return [][]byte{nil}
				}
				return okConnect(req)
			},
			wantFail: simclient.ReasonClosed, failStep: "list",
		},
		{
			name: "truncated frame",
			flow: "[connect, list]",
			reply: func(req tcpwire.Message) [][]byte {
				if _, ok := req.(*tcpwire.ListRoomsReq); ok {
					return [][]byte{{9, 0, 0, 0, 2}, nil}
				}
				return okConnect(req)
			},
			wantRule: tcpwire.RuleFrameTruncated, wantFail: result.ReasonViolation, failStep: "list",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			addr := script(t, tc.reply)
			p := plan(t, "defaults: {timeout: 200ms}\n"+tc.extra, "  - steps: "+tc.flow+"\n")
			r := runSessions(t, p, addr, 1)
			v := r.violations()
			if tc.wantRule != "" && v[tc.wantRule] == 0 {
				t.Errorf("violation %s not counted; got %v", tc.wantRule, v)
			}
			if tc.wantRule == "" && len(v) != 0 {
				t.Errorf("unexpected violations %v", v)
			}
			err := r.errs[0]
			if tc.wantFail == "" {
				if err != nil {
					t.Fatalf("session failed: %v", err)
				}
				return
			}
			if got := simclient.ReasonOf(err); got != tc.wantFail {
				t.Fatalf("failure reason %q (%v), want %q", got, err, tc.wantFail)
			}
			var se *simclient.StepError
			if !errors.As(err, &se) || se.Label != tc.failStep {
				t.Fatalf("failed step %+v, want %s", se, tc.failStep)
			}
		})
	}
}

func TestConnRefused(t *testing.T) {
	addr := deadport.TCP(t)
	p := plan(t, "", "  - steps: [connect]\n")
	r := runSessions(t, p, addr, 1)
	if got := simclient.ReasonOf(r.errs[0]); got != result.ReasonConnRefused {
		t.Fatalf("reason %q (%v), want conn_refused", got, r.errs[0])
	}
	if n := r.step(t, "connect").FailuresByReason[result.ReasonConnRefused]; n != 1 {
		t.Fatalf("connect conn_refused failures = %d", n)
	}
}

func TestMalformedAgainstReference(t *testing.T) {
	addr := referenceServer(t)
	p := plan(t, "", `  - steps:
      - malformed: {count: 6, share: 50%, silence: 2s}
`)
	r := runSessions(t, p, addr, 1)
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if v := r.violations(); len(v) != 0 {
		t.Fatalf("violations %v (%+v)", v, r.run.Violations)
	}
	var sent int64
	for _, m := range r.run.Malformed {
		sent += m.Sent
		if m.UnexpectedReplies != 0 || m.LivenessKept != 1 {
			t.Errorf("%+v", m)
		}
	}
	if valid := r.step(t, "malformed").Successes; sent+valid != 6 || sent == 0 {
		t.Errorf("%d malformed + %d valid, want 6", sent, valid)
	}
}

func TestMalformedIgnored(t *testing.T) {
	// A server that swallows unknown frames without ERROR_MSG or closing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()
	p := plan(t, "defaults: {timeout: 100ms}", `  - steps:
      - malformed: {count: 2, kinds: [unknown_type], silence: 50ms}
`)
	r := runSessions(t, p, ln.Addr().(*net.TCPAddr).AddrPort(), 1)
	if r.errs[0] != nil {
		t.Fatal(r.errs[0])
	}
	if got := r.violations()[RuleTMalformedAns]; got != 2 {
		t.Fatalf("%s = %d, want 2", RuleTMalformedAns, got)
	}
	if m := r.run.Malformed; len(m) != 1 || m[0].UnexpectedReplies != 2 || m[0].LivenessKept != 0 {
		t.Fatalf("%+v", m)
	}
}

// TestRateProbePipelined: the probe pipelines its requests on the
// connection and matches the answers in order, its request built in or
// written as a script; a scripted expect that a reply does not meet
// (its where) counts that request refused, and the note names the reply.
// The requests leave the probe's queue as they are answered: it ends
// holding room for fewer than it sent.
func TestRateProbePipelined(t *testing.T) {
	addr := referenceServer(t)
	held := -1
	probeHeld = func(n int) { held = n }
	t.Cleanup(func() { probeHeld = nil })
	for _, tc := range []struct {
		name, request string // the request's keys in the rate_probe
		accepted      int64
		refusal       string
	}{
		{"built-in", "", 225, ""},
		{"scripted", ", send: LIST_ROOMS_REQ, expect: LIST_ROOMS_ACK", 225, ""},
		{"scripted, a where that fails", `, send: LIST_ROOMS_REQ, expect: {message: LIST_ROOMS_ACK, where: "roomCount > 1000"}`, 0, "LIST_ROOMS_ACK ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan(t, "", `  - steps:
      - connect
      - rate_probe: {from: 50/s, to: 400/s, over: 1s, timeout: 500ms`+tc.request+`}
`)
			r := runSessions(t, p, addr, 1)
			if r.errs[0] != nil {
				t.Fatal(r.errs[0])
			}
			fd := r.run.RateLimits[0]
			if fd.Sent != 225 || fd.Accepted != tc.accepted || fd.Accepted+fd.Limited != fd.Sent {
				t.Fatalf("finding %+v: want 225 sent, %d accepted (the reference TCP lobby has no rate limit)", fd, tc.accepted)
			}
			if tc.refusal != "" && !strings.Contains(fd.Note, "the first refusal: "+tc.refusal) {
				t.Errorf("note %q, want the first refusal %q", fd.Note, tc.refusal)
			}
			if held < 0 || held >= int(fd.Sent) {
				t.Errorf("the probe's queue had room for %d requests at its end, of %d sent: want only those that were in flight at once", held, fd.Sent)
			}
			if v := r.violations(); len(v) != 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}

// TestCloseDuringRun closes a session blocked on a silent server: Run
// returns promptly with the step cancelled, and nothing is counted as
// the server's failure.
func TestCloseDuringRun(t *testing.T) {
	asked := make(chan struct{}, 1)
	addr := script(t, func(tcpwire.Message) [][]byte { // never answers
		select {
		case asked <- struct{}{}:
		default:
		}
		return nil
	})
	p := plan(t, "", "  - steps: [connect]\n")
	c := metrics.NewCollector(time.Now())
	sh, err := simclient.NewShared(p, addr, c, simclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	fac, _ := simclient.Lookup("tcp-lobby")
	s, err := fac(sh, 0, &p.Flows[0], netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Run(context.Background(), time.Time{}) }()
	// Closed once the server has the request, so the session is in its
	// wait for the reply: closed before it started, it would prove nothing.
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the session sent nothing")
	}
	s.Close()
	select {
	case err := <-done:
		if simclient.ReasonOf(err) != simclient.ReasonCancelled {
			t.Fatalf("Run returned %v, want a cancelled step", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	run, _ := c.Snapshot()
	if run.Totals.Failures != 0 {
		t.Fatalf("failures %+v", run.Totals)
	}
}
