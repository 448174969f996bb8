package tcp

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/wire/tcplobby"
)

// FuzzServer feeds two clients arbitrary bytes on a fresh server (so room 1
// is the first room and the fuzzer can join it). Whatever the input: the
// server never panics, every frame it sends decodes strictly and is a
// server-to-client type, and once both clients have gone no room and no
// connection is left behind.
func FuzzServer(f *testing.F) {
	create := tcplobby.AppendFrame(nil, &tcplobby.CreateRoomReq{RoomName: tcplobby.MakeName("r"), PlayerName: tcplobby.MakeName("a")})
	join := tcplobby.AppendFrame(nil, &tcplobby.JoinRoomReq{RoomID: 1, PlayerName: tcplobby.MakeName("b")})
	ready := tcplobby.AppendFrame(nil, &tcplobby.ReadyReq{})
	start := tcplobby.AppendFrame(nil, &tcplobby.StartReq{})
	list := tcplobby.AppendFrame(nil, &tcplobby.ListRoomsReq{})
	connect := tcplobby.AppendFrame(nil, &tcplobby.ConnectReq{PlayerName: tcplobby.MakeName("c")})
	disc := tcplobby.AppendFrame(nil, &tcplobby.Disconnect{})
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	f.Add(uint8(0), cat(create, ready, start))
	f.Add(uint8(len(create)+len(ready)), cat(create, ready, join, ready, start, list))
	f.Add(uint8(len(create)), cat(create, join, start, disc))
	f.Add(uint8(10), cat(connect, list, create, list, disc))
	f.Add(uint8(4), cat(rawFrame(0), rawFrame(1, 0x13)))
	f.Add(uint8(3), cat(rawFrame(4097), create))
	f.Fuzz(func(t *testing.T, split uint8, data []byte) {
		cfg := testConfig(&fakePool{addr: gameAddr})
		cfg.CountdownInterval = time.Microsecond
		cfg.Linger = 100 * time.Millisecond
		s := startServer(t, cfg)
		k := min(int(split), len(data))
		var conns []net.Conn
		for _, part := range [][]byte{data[:k], data[k:]} {
			nc, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(ioTimeout))
			if _, err := nc.Write(part); err != nil && !resetErr(err) {
				t.Fatal(err)
			}
			conns = append(conns, nc)
		}
		done := make(chan error, len(conns))
		for _, nc := range conns {
			nc.(*net.TCPConn).CloseWrite()
			go func() { done <- drain(nc) }()
		}
		for range conns {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "connections to end", func() bool { return s.Stats().ConnsActive == 0 })
		if st := s.Stats(); st.RoomsActive != 0 || st.RoomsCreated != st.RoomsRemoved {
			t.Fatalf("rooms left behind: %+v", st)
		}
	})
}

// drain reads frames until the server ends the stream, checking each.
func drain(nc net.Conn) error {
	fr := tcplobby.NewFrameReader(nc, tcplobby.DefaultMaxFrame)
	for {
		p, err := fr.Next()
		if errors.Is(err, io.EOF) || resetErr(err) {
			return nil
		}
		if err != nil {
			return err
		}
		m, err := tcplobby.Decode(p)
		if err != nil {
			return err
		}
		switch m.Type() {
		case tcplobby.TypeListRoomsReq, tcplobby.TypeCreateRoomReq, tcplobby.TypeJoinRoomReq,
			tcplobby.TypeConnectReq, tcplobby.TypeReadyReq, tcplobby.TypeStartReq, tcplobby.TypeDisconnect:
			return errors.New("server sent client-to-server type " + m.Type().String())
		}
	}
}

// resetErr reports a reset: the server hard-closes a client whose queue
// overflowed, which is allowed.
func resetErr(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
