package toyecho

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lobbybench/lobbybench/refserver"
)

// Config configures the toy echo server.
type Config struct {
	// Addr is the UDP listen address.
	Addr string
	// Delay is how long it waits before each reply.
	Delay time.Duration
	// Logger receives its logs; nil discards them.
	Logger *slog.Logger
}

// Stats are the toy server's counters.
type Stats struct {
	Requests uint64 `json:"requests"`
	Ignored  uint64 `json:"ignored"`
}

// Server is a running toy echo server.
type Server struct {
	c         *net.UDPConn
	delay     time.Duration
	requests  atomic.Uint64
	ignored   atomic.Uint64
	done      chan struct{}
	closeOnce sync.Once
}

// Listen starts a toy echo server on cfg.Addr.
func Listen(cfg Config) (*Server, error) {
	a, err := net.ResolveUDPAddr("udp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("toy-echo: %w", err)
	}
	c, err := net.ListenUDP("udp", a)
	if err != nil {
		return nil, fmt.Errorf("toy-echo: %w", err)
	}
	s := &Server{c: c, delay: cfg.Delay, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

func (s *Server) serve() {
	defer close(s.done)
	buf := make([]byte, 2048)
	var out []byte
	for {
		n, from, err := s.c.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // an ICMP error of an earlier reply
		}
		seq, payload, ok := parse(buf[:n], requestMagic)
		if !ok {
			s.ignored.Add(1)
			continue
		}
		s.requests.Add(1)
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		out = appendReply(out[:0], seq, payload)
		s.c.WriteToUDPAddrPort(out, from)
	}
}

// Addr returns the address it listens on.
func (s *Server) Addr() netip.AddrPort {
	a := s.c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Stats returns its counters.
func (s *Server) Stats() Stats { return Stats{Requests: s.requests.Load(), Ignored: s.ignored.Load()} }

// Close stops it and waits for it.
func (s *Server) Close() {
	s.closeOnce.Do(func() { s.c.Close() })
	<-s.done
}

// Part is the toy echo server as a part of the reference server: its
// embedded server in runs, and one of serve's.
func Part() *refserver.Part {
	return &refserver.Part{
		Name:     Name,
		Order:    100,
		Default:  func() any { return &Config{Addr: "127.0.0.1:0"} },
		Loopback: func() any { return &Config{Addr: "127.0.0.1:0"} },
		Files:    func(any, int) int { return 1 },
		Off:      refserver.OffFlag{Name: "no-toy-echo", Usage: "do not run the toy echo server"},
		Flags: func(fs *refserver.Flags) func(refserver.FlagEnv) (any, error) {
			addr := fs.String("toy-echo-addr", "127.0.0.1:0", "toy echo server listen `address` (by default a free loopback port: a test protocol that many serve processes of the tests run at once)")
			delay := fs.Duration("toy-echo-delay", 0, "how long the toy echo server waits before each reply")
			return func(env refserver.FlagEnv) (any, error) {
				switch {
				case !refserver.HostPortOK(*addr):
					return nil, fmt.Errorf("--toy-echo-addr: %q is not HOST:PORT with an IP host", *addr)
				case *delay < 0:
					return nil, errors.New("--toy-echo-delay: must not be negative")
				case !env.On:
					return nil, nil
				}
				return &Config{Addr: *addr, Delay: *delay}, nil
			}
		},
		Start: func(cfg any, logger *slog.Logger, _ map[string]any) (refserver.Running, error) {
			s, err := Listen(*cfg.(*Config))
			if err != nil {
				return nil, err
			}
			return running{s}, nil
		},
		NewStats: func() any { return new(Stats) },
		Text: func(st any, w io.Writer, prefix string) error {
			s := st.(*Stats)
			return refserver.WriteFlat(w, prefix, map[string]uint64{"requests": s.Requests, "ignored": s.Ignored})
		},
		Announce: func(_ any, addr netip.AddrPort) string { return fmt.Sprintf("toy echo server on %s", addr) },
	}
}

type running struct{ s *Server }

func (r running) Addr() netip.AddrPort { return r.s.Addr() }
func (r running) Stats() any           { st := r.s.Stats(); return &st }
func (r running) Service(string) any   { return nil }
func (r running) Server() any          { return r.s }
func (r running) Close()               { r.s.Close() }
