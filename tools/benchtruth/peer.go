package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// The peer is a child process (this program again, peerEnv set) running
// the stub server and the reference client of one measurement. Its
// protocol, on the child's standard input and output, one line each:
//
//	child:  addr <host:port>            the stub listens
//	parent: go                          lobbybench starts: run the reference
//	child:  {"P50":…}                   the reference's figures (peerResult)
//	parent: (closes standard input)     lobbybench is done: close the stub
const peerEnv = "BENCHTRUTH_PEER"

// peerConfig is what the parent tells the child, in peerEnv.
type peerConfig struct {
	Rate     int
	Delay    time.Duration
	Stall    time.Duration
	Every    time.Duration
	Duration time.Duration
}

// peerResult is refResult on the wire.
type peerResult struct {
	P50, P99, UncorrP50, KernelP50, LagP50, LagP99 int64
	Err                                            string
}

// peer is the parent's handle on a running child.
type peer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr netip.AddrPort
}

// startPeer starts the child for c, run for d, and waits for its stub's
// address.
func startPeer(c config, d time.Duration) (*peer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cfg, _ := json.Marshal(peerConfig{Rate: c.rate, Delay: c.delay, Stall: c.stall, Every: c.every, Duration: d})
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), peerEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	p := &peer{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := p.out.ReadString('\n')
	a, ok := strings.CutPrefix(strings.TrimSpace(line), "addr ")
	if err == nil && !ok {
		err = fmt.Errorf("said %q, not its address", line)
	}
	if err == nil {
		p.addr, err = netip.ParseAddrPort(a)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("peer: %w", err)
	}
	return p, nil
}

// start tells the child to start its reference client.
func (p *peer) start() error {
	_, err := io.WriteString(p.in, "go\n")
	return err
}

// result waits for the reference client's figures.
func (p *peer) result() refResult {
	line, err := p.out.ReadString('\n')
	if err != nil {
		return refResult{err: fmt.Errorf("peer: %w", err)}
	}
	var w peerResult
	if err := json.Unmarshal([]byte(line), &w); err != nil {
		return refResult{err: fmt.Errorf("peer: %w", err)}
	}
	r := refResult{p50: w.P50, p99: w.P99, uncorrP50: w.UncorrP50, kernelP50: w.KernelP50, lagP50: w.LagP50, lagP99: w.LagP99}
	if w.Err != "" {
		r.err = errors.New(w.Err)
	}
	return r
}

// close ends the child (it closes its stub at the end of its input) and
// waits for it.
func (p *peer) close() {
	p.in.Close()
	_ = p.cmd.Wait()
}

// runPeer is the child's side: cfg is peerEnv's value.
func runPeer(cfg string) error {
	var c peerConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		return fmt.Errorf("%s: %w", peerEnv, err)
	}
	srv, err := newStub(c.Delay, c.Stall, c.Every)
	if err != nil {
		return err
	}
	defer srv.close()
	fmt.Printf("addr %s\n", srv.addr)
	in := bufio.NewReader(os.Stdin)
	if line, err := in.ReadString('\n'); err != nil || strings.TrimSpace(line) != "go" {
		return nil // the parent gave up
	}
	r := runReference(srv.addr, c.Rate, c.Duration)
	w := peerResult{P50: r.p50, P99: r.p99, UncorrP50: r.uncorrP50, KernelP50: r.kernelP50, LagP50: r.lagP50, LagP99: r.lagP99}
	if r.err != nil {
		w.Err = r.err.Error()
	}
	b, _ := json.Marshal(w)
	fmt.Printf("%s\n", b)
	_, _ = io.Copy(io.Discard, in) // serve until lobbybench is done
	return nil
}

// stub is the server under test: LOBBY_LIST_ROOMS answered with an empty
// ROOM_LIST after delay; during a stall (the first stall of every every)
// replies are held until the stall ends.
type stub struct {
	conn  *net.UDPConn
	addr  netip.AddrPort
	start time.Time
	delay time.Duration
	stall time.Duration
	every time.Duration
	done  chan struct{}
}

func newStub(delay, stall, every time.Duration) (*stub, error) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadBuffer(8 << 20)
	_ = conn.SetWriteBuffer(8 << 20)
	s := &stub{conn: conn, addr: conn.LocalAddr().(*net.UDPAddr).AddrPort(), start: time.Now(),
		delay: delay, stall: stall, every: every, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

func (s *stub) close() { s.conn.Close(); <-s.done }

// replyAt is when a request received at now is answered.
func (s *stub) replyAt(now time.Time) time.Time {
	at := now.Add(s.delay)
	if s.stall > 0 && s.every > 0 {
		into := now.Sub(s.start) % s.every
		// The stall is the last stall of each period, so the run starts
		// unstalled.
		if into >= s.every-s.stall {
			end := now.Add(s.every - into)
			if end.After(at) {
				at = end
			}
		}
	}
	return at
}

func (s *stub) serve() {
	defer close(s.done)
	buf := make([]byte, 2048)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		h, err := udpwire.DecodeHeader(buf[:n], udpwire.ProfileSpec)
		if err != nil || h.Type != udpwire.LobbyListRooms {
			continue
		}
		reply, _ := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, h.Seq, nil)
		now := time.Now()
		if at := s.replyAt(now); at.After(now) {
			time.AfterFunc(at.Sub(now), func() { _, _ = s.conn.WriteToUDPAddrPort(reply, from) })
			continue
		}
		_, _ = s.conn.WriteToUDPAddrPort(reply, from)
	}
}
