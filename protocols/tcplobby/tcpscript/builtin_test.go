package tcpscript_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/metrics"
	_ "github.com/lobbybench/lobbybench/protocols/tcplobby" // registers tcp-lobby's client
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// recorder is a fake lobby on 127.0.0.1 that answers each request well
// and keeps every byte the client sent, until the client closes.
type recorder struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	sent bytes.Buffer
}

func record(t *testing.T) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go r.serve(c)
		}
	}()
	return r
}

func (r *recorder) serve(c net.Conn) {
	defer r.wg.Done()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var got bytes.Buffer
	defer func() { r.mu.Lock(); r.sent.Write(got.Bytes()); r.mu.Unlock() }()
	fr := tcpwire.NewFrameReader(io.TeeReader(c, &got), 0)
	for {
		p, err := fr.Next()
		if err != nil {
			return
		}
		if reply := answer(tcpwire.Type(p[0])); reply != nil {
			_, _ = c.Write(tcpwire.AppendFrame(nil, reply))
		}
	}
}

// answer is a lobby's good answer to a request (hash 7, room 3).
func answer(t tcpwire.Type) tcpwire.Message {
	switch t {
	case tcpwire.TypeConnectReq:
		return &tcpwire.ConnectAck{Success: true, PlayerHash: 7}
	case tcpwire.TypeListRoomsReq:
		return &tcpwire.ListRoomsAck{}
	case tcpwire.TypeCreateRoomReq:
		return &tcpwire.CreateRoomAck{RoomID: 3, PlayerHash: 7}
	case tcpwire.TypeJoinRoomReq:
		a := &tcpwire.JoinRoomAck{PlayerHash: 7, Count: 1}
		a.Players[0] = tcpwire.PlayerInfo{Number: 1, Hash: 7, Name: tcpwire.MakeName("bot0")}
		return a
	case tcpwire.TypeReadyReq:
		return &tcpwire.PlayerReady{PlayerHash: 7, Ready: true}
	case tcpwire.TypeStartReq:
		return &tcpwire.Countdown{Seconds: 3}
	}
	return nil
}

// play runs one tcp-lobby client of steps against r and returns every
// byte it sent.
func (r *recorder) play(t *testing.T, steps string) []byte {
	t.Helper()
	y := "protocol: tcp-lobby\nload: {clients: 1, duration: 10s}\ndefaults: {timeout: 5s}\nflows:\n  - steps: " + steps + "\n"
	p, err := scenario.Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatalf("scenario:\n%s\n%v", y, err)
	}
	sh, err := simclient.NewShared(p, r.ln.Addr().(*net.TCPAddr).AddrPort(), metrics.NewCollector(time.Now()), simclient.Options{Tick: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	f, ok := simclient.Lookup(tcpwire.ProtocolName)
	if !ok {
		t.Fatal("tcp-lobby not registered")
	}
	s, err := f(sh, 0, &p.Flows[0], netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Run(ctx, time.Time{}); err != nil {
		t.Errorf("run: %v", err)
	}
	s.Close()
	r.wg.Wait() // the client closed: every connection's bytes are in
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.sent.Bytes())
}

type send struct {
	name   string
	fields map[string]any
}

// TestBuiltinClientSends: the built-in client's steps send, byte for
// byte, the frames of the scripted messages with the same fields.
func TestBuiltinClientSends(t *testing.T) {
	tests := []struct {
		steps string
		want  []send
	}{
		{"[{connect: {name: alice}}, list_rooms, {create_room: lobby1}, ready, start, disconnect]", []send{
			{"CONNECT_REQ", map[string]any{"playerName": "alice"}},
			{"LIST_ROOMS_REQ", nil},
			{"CREATE_ROOM_REQ", map[string]any{"roomName": "lobby1", "playerName": "alice"}},
			{"READY_REQ", nil},
			{"START_REQ", nil},
			{"DISCONNECT", nil},
		}},
		{"[connect, {join: 3}, disconnect]", []send{ // client 0 is named bot0
			{"CONNECT_REQ", map[string]any{"playerName": "bot0"}},
			{"JOIN_ROOM_REQ", map[string]any{"roomId": uint64(3), "playerName": "bot0"}},
			{"DISCONNECT", nil},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.steps, func(t *testing.T) {
			var want []byte
			for _, s := range tc.want {
				p, err := cat.Encode(cat.NewSession(nil), s.name, s.fields)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, tcpscript.Frame(p)...)
			}
			if got := record(t).play(t, tc.steps); !bytes.Equal(got, want) {
				t.Errorf("the built-in client sent\n%x\nthe scripted messages are\n%x", got, want)
			}
		})
	}
}
