package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/crash"
	reftcp "github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/refserver"
)

// The fake servers a --target-cmd test owns: the test binary run again
// with fakeEnv set becomes one, listening at its first argument.
//
//	exit3               says "fatal: no config file" and exits 3 at once
//	mute                accepts TCP connections and never answers
//	tcp                 a TCP lobby (the reference server behind a frame relay)
//	tcp-abort=TYPE      the same, killed by SIGABRT on a frame of TYPE
//	                    (tcplobby name, e.g. CONNECT_REQ), after saying so
//	tcp-hang=TYPE       the same, answering nothing more after TYPE (silent)
//	slow-tcp            sleeps 2s before it listens
//
// fakeLatencyEnv delays every frame to the lobby (a duration); fakePIDEnv
// names a file to write the process id to; fakeNoTermEnv makes it ignore
// SIGTERM.
const (
	fakeEnv        = "LOBBYBENCH_TEST_FAKE"
	fakeLatencyEnv = "LOBBYBENCH_TEST_FAKE_LATENCY"
	fakePIDEnv     = "LOBBYBENCH_TEST_FAKE_PIDFILE"
	fakeNoTermEnv  = "LOBBYBENCH_TEST_FAKE_NOTERM"
)

func fakeServer(mode string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fake server: no address")
		return 2
	}
	addr := args[0]
	if os.Getenv(fakeNoTermEnv) != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	if f := os.Getenv(fakePIDEnv); f != "" {
		os.WriteFile(f, []byte(fmt.Sprint(os.Getpid())), 0o644)
	}
	mode, on, _ := strings.Cut(mode, "=")
	switch mode {
	case "exit3":
		fmt.Fprintln(os.Stderr, "fatal: no config file")
		return 3
	case "mute":
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			c, err := ln.Accept()
			if err != nil {
				return 1
			}
			conns = append(conns, c) // held, never answered
		}
		return 0
	case "slow-tcp":
		time.Sleep(2 * time.Second)
		mode = "tcp"
	}
	if mode != "tcp" && mode != "tcp-abort" && mode != "tcp-hang" {
		fmt.Fprintf(os.Stderr, "fake server: unknown mode %q\n", mode)
		return 2
	}
	fatal := tcpwire.Type(0)
	if on != "" {
		for _, t := range tcpwire.Types {
			if t.String() == on {
				fatal = t
			}
		}
		if fatal == 0 {
			fmt.Fprintf(os.Stderr, "fake server: unknown message %q\n", on)
			return 2
		}
	}
	latency, _ := time.ParseDuration(os.Getenv(fakeLatencyEnv))
	cfg := refserver.Loopback()
	refudp.ConfigOf(cfg).CountdownInterval = 20 * time.Millisecond
	reftcp.ConfigOf(cfg).CountdownInterval = 20 * time.Millisecond
	ref, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ref.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("fake lobby listening on", ln.Addr())
	r := &relay{upstream: ref.Addr(tcpwire.ProtocolName).String(), fatal: fatal, hang: mode == "tcp-hang", latency: latency}
	// Bounded: the test that started it stops it long before.
	time.AfterFunc(5*time.Minute, func() { os.Exit(9) })
	for {
		c, err := ln.Accept()
		if err != nil {
			return 1
		}
		go r.serve(c)
	}
}

// relay passes TCP lobby frames to the reference server and back, and
// dies (or hangs) on the fatal frame type.
type relay struct {
	upstream string
	fatal    tcpwire.Type
	hang     bool
	latency  time.Duration
	mu       sync.Mutex
	hung     bool
}

func (r *relay) isHung() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hung
}

func (r *relay) serve(cc net.Conn) {
	if r.isHung() {
		return // accepted, never answered (the connection stays open)
	}
	uc, err := net.Dial("tcp", r.upstream)
	if err != nil {
		cc.Close()
		return
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := uc.Read(buf)
			if err != nil {
				cc.Close()
				return
			}
			if !r.isHung() {
				cc.Write(buf[:n])
			}
		}
	}()
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(cc, hdr[:]); err != nil {
			uc.Close()
			return
		}
		b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(cc, b); err != nil {
			uc.Close()
			return
		}
		if r.fatal != 0 && len(b) > 0 && tcpwire.Type(b[0]) == r.fatal {
			if r.hang {
				fmt.Fprintf(os.Stderr, "lobby: deadlock handling %s\n", r.fatal)
				r.mu.Lock()
				r.hung = true
				r.mu.Unlock()
			} else {
				abort(fmt.Sprintf("lobby: assertion failed in handle_%s: player->room != NULL", strings.ToLower(r.fatal.String())))
			}
		}
		if r.isHung() {
			continue
		}
		if r.latency > 0 {
			time.Sleep(r.latency)
		}
		if _, err := uc.Write(append(hdr[:], b...)); err != nil {
			return
		}
	}
}

// abort says why on stderr and dies by SIGABRT, as a C server's failed
// assert does: the last lines of output are the server's own.
func abort(why string) {
	fmt.Fprintln(os.Stderr, why)
	fmt.Fprintln(os.Stderr, "Aborted")
	crash.Abort()
}
