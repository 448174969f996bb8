package tcpserver

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// FuzzServer feeds two clients arbitrary bytes on a fresh server (so room 1
// is the first room and the fuzzer can join it). Whatever the input: the
// server never panics, every frame it sends decodes strictly and is a
// server-to-client type, and once both clients have gone no room and no
// connection is left behind.
func FuzzServer(f *testing.F) {
	create := tcpwire.AppendFrame(nil, &tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("r"), PlayerName: tcpwire.MakeName("a")})
	join := tcpwire.AppendFrame(nil, &tcpwire.JoinRoomReq{RoomID: 1, PlayerName: tcpwire.MakeName("b")})
	ready := tcpwire.AppendFrame(nil, &tcpwire.ReadyReq{})
	start := tcpwire.AppendFrame(nil, &tcpwire.StartReq{})
	list := tcpwire.AppendFrame(nil, &tcpwire.ListRoomsReq{})
	connect := tcpwire.AppendFrame(nil, &tcpwire.ConnectReq{PlayerName: tcpwire.MakeName("c")})
	disc := tcpwire.AppendFrame(nil, &tcpwire.Disconnect{})
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
	fr := tcpwire.NewFrameReader(nc, tcpwire.DefaultMaxFrame)
	for {
		p, err := fr.Next()
		if errors.Is(err, io.EOF) || resetErr(err) {
			return nil
		}
		if err != nil {
			return err
		}
		m, err := tcpwire.Decode(p)
		if err != nil {
			return err
		}
		switch m.Type() {
		case tcpwire.TypeListRoomsReq, tcpwire.TypeCreateRoomReq, tcpwire.TypeJoinRoomReq,
			tcpwire.TypeConnectReq, tcpwire.TypeReadyReq, tcpwire.TypeStartReq, tcpwire.TypeDisconnect:
			return errors.New("server sent client-to-server type " + m.Type().String())
		}
	}
}

// resetErr reports a reset: the server hard-closes a client whose queue
// overflowed, which is allowed.
func resetErr(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
