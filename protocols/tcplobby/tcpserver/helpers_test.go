package tcpserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// ioTimeout bounds every blocking read in tests: generous, so a loaded
// machine does not flake, yet a stalled server still fails the test.
const ioTimeout = 10 * time.Second

var gameAddr = netip.MustParseAddrPort("127.0.0.1:7778")

// fakePool records allocations. Allocate blocks while gate is non-nil and
// open, after signalling called.
type fakePool struct {
	mu       sync.Mutex
	addr     netip.AddrPort
	err      error
	allocs   []int
	released []netip.AddrPort
	called   chan int      // optional: receives n on each Allocate
	gate     chan struct{} // optional: Allocate waits for it to be closed
	relCh    chan netip.AddrPort
}

func (p *fakePool) Allocate(n int) (netip.AddrPort, error) {
	p.mu.Lock()
	p.allocs = append(p.allocs, n)
	addr, err, called, gate := p.addr, p.err, p.called, p.gate
	p.mu.Unlock()
	if called != nil {
		called <- n
	}
	if gate != nil {
		<-gate
	}
	return addr, err
}

func (p *fakePool) Release(a netip.AddrPort) {
	p.mu.Lock()
	p.released = append(p.released, a)
	ch := p.relCh
	p.mu.Unlock()
	if ch != nil {
		ch <- a
	}
}

func (p *fakePool) allocations() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.allocs...)
}

var _ Releaser = (*fakePool)(nil)

// testConfig is a loopback config with a fast countdown.
func testConfig(pool InstancePool) Config {
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.CountdownInterval = time.Millisecond
	cfg.Linger = 200 * time.Millisecond
	cfg.Pool = pool
	// Every test client dials from 127.0.0.1: the per-IP quotas are off
	// unless a test is about them (quota_test.go).
	cfg.MaxConnsPerIP, cfg.MaxRoomsPerIP = -1, -1
	return cfg
}

// startServer runs a server until the test ends.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Pool == nil {
		cfg.Pool = &fakePool{addr: gameAddr}
	}
	s, err := Listen(cfg)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// client is a strict test client: every frame the server sends must decode
// strictly, so a malformed server frame fails the test.
type client struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
	fr *tcpwire.FrameReader
	fw *tcpwire.FrameWriter
}

func dial(t testing.TB, s *Server) *client {
	t.Helper()
	return dialFrom(t, s, "127.0.0.1")
}

// dialFrom connects from the loopback address ip.
func dialFrom(t testing.TB, s *Server, ip string) *client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	nc, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	return &client{t: t, nc: nc, br: br, fr: tcpwire.NewFrameReader(br, tcpwire.DefaultMaxFrame), fw: tcpwire.NewFrameWriter(nc)}
}

func (c *client) send(m tcpwire.Message) {
	c.t.Helper()
	if err := c.fw.WriteMessage(m); err != nil {
		c.t.Fatalf("send %v: %v", m.Type(), err)
	}
}

func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("send raw: %v", err)
	}
}

// read returns the next message or the read error.
func (c *client) read(timeout time.Duration) (tcpwire.Message, error) {
	c.nc.SetReadDeadline(time.Now().Add(timeout))
	p, err := c.fr.Next()
	if err != nil {
		return nil, err
	}
	return tcpwire.Decode(p)
}

// next returns the next message, failing the test on any error.
func (c *client) next() tcpwire.Message {
	c.t.Helper()
	m, err := c.read(ioTimeout)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// expect returns the next message, which must be of type want.
func (c *client) expect(want tcpwire.Type) tcpwire.Message {
	c.t.Helper()
	m := c.next()
	if m.Type() != want {
		c.t.Fatalf("got %v %+v, want %v", m.Type(), m, want)
	}
	return m
}

// expectSeq reads len(types) messages of these types in order.
func (c *client) expectSeq(types ...tcpwire.Type) []tcpwire.Message {
	c.t.Helper()
	out := make([]tcpwire.Message, len(types))
	for i, ty := range types {
		out[i] = c.expect(ty)
	}
	return out
}

// expectQuiet fails if a frame arrives within d.
func (c *client) expectQuiet(d time.Duration) {
	c.t.Helper()
	// Peek, not FrameReader.Next: a deadline error inside the frame reader
	// is sticky, bufio's is not.
	c.nc.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.Peek(1)
	if err == nil {
		m := c.next()
		c.t.Fatalf("unexpected %v %+v", m.Type(), m)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("expected silence, got %v", err)
	}
}

// expectError reads an ERROR_MSG with the given code.
func (c *client) expectError(code tcpwire.ErrorCode) *tcpwire.ErrorMsg {
	c.t.Helper()
	m := c.expect(tcpwire.TypeErrorMsg).(*tcpwire.ErrorMsg)
	if m.Code != code {
		c.t.Fatalf("ERROR_MSG code 0x%02x (%q), want 0x%02x", m.Code, m.Text, code)
	}
	return m
}

// expectEOF reads until an orderly end of stream; any frame is an error.
func (c *client) expectEOF() {
	c.t.Helper()
	m, err := c.read(ioTimeout)
	if err == nil {
		c.t.Fatalf("got %v %+v, want end of stream", m.Type(), m)
	}
	if !errors.Is(err, io.EOF) {
		c.t.Fatalf("got %v, want EOF (orderly close, not a reset)", err)
	}
}

func (c *client) create(room, player string) *tcpwire.CreateRoomAck {
	c.t.Helper()
	c.send(&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName(room), PlayerName: tcpwire.MakeName(player)})
	return c.expect(tcpwire.TypeCreateRoomAck).(*tcpwire.CreateRoomAck)
}

func (c *client) join(id uint32, player string) *tcpwire.JoinRoomAck {
	c.t.Helper()
	c.send(&tcpwire.JoinRoomReq{RoomID: id, PlayerName: tcpwire.MakeName(player)})
	return c.expect(tcpwire.TypeJoinRoomAck).(*tcpwire.JoinRoomAck)
}

// room is a helper: n clients in one room, all initial frames consumed.
// members[0] is the host. Hashes are returned in join order.
func newRoom(t testing.TB, s *Server, n int) ([]*client, []uint64, uint32) {
	t.Helper()
	cs := make([]*client, n)
	hs := make([]uint64, n)
	cs[0] = dial(t, s)
	ack := cs[0].create("room", "p1")
	if ack.RoomID == 0 {
		t.Fatalf("create failed")
	}
	cs[0].expect(tcpwire.TypeRoomUpdate)
	hs[0] = ack.PlayerHash
	for i := 1; i < n; i++ {
		cs[i] = dial(t, s)
		j := cs[i].join(ack.RoomID, "p"+string(rune('1'+i)))
		if j.Status != tcpwire.JoinSuccess {
			t.Fatalf("join %d: %v", i, j.Status)
		}
		hs[i] = j.PlayerHash
		cs[i].expect(tcpwire.TypeRoomUpdate)
		for k := 0; k < i; k++ {
			cs[k].expectSeq(tcpwire.TypePlayerJoin, tcpwire.TypeRoomUpdate)
		}
	}
	return cs, hs, ack.RoomID
}

// readyAll toggles every client ready, consuming the broadcasts.
func readyAll(t testing.TB, cs []*client) {
	t.Helper()
	for _, c := range cs {
		c.send(&tcpwire.ReadyReq{})
		for _, o := range cs {
			o.expectSeq(tcpwire.TypePlayerReady, tcpwire.TypeRoomUpdate)
		}
	}
}

// waitFor polls cond until it holds or ioTimeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
