// Package refserver runs the bundled reference server: the UDP lobby with
// its game instances (reference-server/udp), the TCP lobby
// (reference-server/tcp) and the Leviathan endpoint
// (reference-server/leviathan), wired so the TCP lobby's GAME_START hands players
// over to a UDP instance from the same pool. `lobbybench serve` runs it as a
// process; `lobbybench run` embeds it (Loopback) when a scenario names no
// target.
package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"sort"
	"sync"

	reflev "github.com/lobbybench/lobbybench/reference-server/leviathan"
	"github.com/lobbybench/lobbybench/reference-server/tcp"
	"github.com/lobbybench/lobbybench/reference-server/udp"
)

// The parts of the reference server, by the names its counters carry
// ("udp.requests…" in WriteText, "udp" in the Stats JSON). A protocol's
// descriptor (simclient.Protocol.EmbeddedParts) names the parts an
// embedded run of it needs.
const (
	UDPLobby  = "udp"       // the UDP lobby and its game instances
	TCPLobby  = "tcp"       // the TCP lobby (its games go to the UDP lobby's instances)
	Leviathan = "leviathan" // the Leviathan endpoint
)

// Only returns c with every part not named in parts disabled. An unknown
// name is an error.
func (c Config) Only(parts ...string) (Config, error) {
	keep := map[string]bool{}
	for _, p := range parts {
		if p != UDPLobby && p != TCPLobby && p != Leviathan {
			return c, fmt.Errorf("refserver: no part %q (have %s, %s, %s)", p, UDPLobby, TCPLobby, Leviathan)
		}
		keep[p] = true
	}
	if !keep[UDPLobby] {
		c.UDP = nil
	}
	if !keep[TCPLobby] {
		c.TCP = nil
	}
	if !keep[Leviathan] {
		c.Leviathan = nil
	}
	return c, nil
}

// Config selects and configures the parts to run. A nil part is disabled.
type Config struct {
	// UDP configures the UDP lobby and its game instances.
	UDP *udp.Config
	// TCP configures the TCP lobby. Its Pool defaults to the UDP server;
	// with UDP disabled it must be set (e.g. tcp.StaticPool).
	TCP *tcp.Config
	// Leviathan configures the Leviathan reliable-UDP endpoint.
	Leviathan *reflev.Config
	// Logger is used by parts whose own Logger is nil; nil discards logs.
	Logger *slog.Logger
}

// DefaultConfig enables every part with its documented defaults (UDP :8080
// with instances from 8081, TCP :7777, Leviathan :53221).
func DefaultConfig() Config {
	u := udp.DefaultConfig()
	t := tcp.DefaultConfig()
	l := reflev.DefaultConfig()
	return Config{UDP: &u, TCP: &t, Leviathan: &l}
}

// Loopback is the embedded mode's configuration: both lobbies on free
// 127.0.0.1 ports, instance ports chosen by the OS, no logs, no rate limit
// and no per-source quotas (a load test run against it measures the
// server, not the defences `serve` has against one abusive address).
func Loopback() Config {
	c := DefaultConfig()
	c.UDP.Addr = "127.0.0.1:0"
	c.UDP.BasePort = 0
	c.UDP.MaxRoomsPerIP, c.UDP.MaxHoldsPerIP = 0, 0
	c.TCP.Addr = "127.0.0.1:0"
	c.TCP.MaxConnsPerIP, c.TCP.MaxRoomsPerIP = -1, -1
	c.Leviathan.Addr = "127.0.0.1:0"
	c.Leviathan.MaxConnsPerIP = -1
	return c
}

// Server is a running reference server.
type Server struct {
	udp *udp.Server
	tcp *tcp.Server
	lev *reflev.Server

	tcpDone   chan error
	tcpStop   context.CancelFunc
	closeOnce sync.Once

	mu      sync.Mutex
	stopCtx func() bool // unregisters Close from the context
}

// Start validates cfg and starts the enabled parts on their addresses (port
// 0 picks a free one; read them back with Addr). The server
// runs until ctx is done or Close is called.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.UDP == nil && cfg.TCP == nil && cfg.Leviathan == nil {
		return nil, errors.New("refserver: no part enabled (UDP, TCP and Leviathan all off)")
	}
	if cfg.TCP != nil && cfg.UDP == nil && cfg.TCP.Pool == nil {
		return nil, errors.New("refserver: the TCP lobby needs an instance pool: enable UDP or set TCP.Pool")
	}
	s := &Server{}
	if cfg.UDP != nil {
		uc := *cfg.UDP
		if uc.Logger == nil {
			uc.Logger = cfg.Logger
		}
		u, err := udp.Listen(uc)
		if err != nil {
			return nil, fmt.Errorf("refserver: %w", err)
		}
		s.udp = u
	}
	if cfg.TCP != nil {
		tc := *cfg.TCP
		if tc.Logger == nil {
			tc.Logger = cfg.Logger
		}
		if tc.Pool == nil {
			tc.Pool = s.udp
		}
		t, err := tcp.Listen(tc)
		if err != nil {
			if s.udp != nil {
				s.udp.Close()
			}
			return nil, fmt.Errorf("refserver: %w", err)
		}
		s.tcp = t
		// Stopped through its context, not tcp.Server.Close: a Close racing
		// with Serve's start trips the race detector (WaitGroup Add vs Wait
		// inside tcp), while a cancelled context is observed by Serve itself.
		tctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		s.tcpDone, s.tcpStop = done, cancel
		go func() { done <- t.Serve(tctx) }()
	}
	if cfg.Leviathan != nil {
		lc := *cfg.Leviathan
		if lc.Logger == nil {
			lc.Logger = cfg.Logger
		}
		l, err := reflev.Start(lc)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("refserver: %w", err)
		}
		s.lev = l
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Lock()
	s.stopCtx = stop
	s.mu.Unlock()
	return s, nil
}

// The UDP server is the TCP lobby's instance pool.
var (
	_ tcp.InstancePool = (*udp.Server)(nil)
	_ tcp.Releaser     = (*udp.Server)(nil)
)

// Addr returns the address of part (UDPLobby, TCPLobby or Leviathan), or
// the zero value when that part is disabled or unknown.
func (s *Server) Addr(part string) netip.AddrPort {
	switch {
	case part == UDPLobby && s.udp != nil:
		return s.udp.Addr()
	case part == TCPLobby && s.tcp != nil:
		return s.tcp.Addr()
	case part == Leviathan && s.lev != nil:
		return s.lev.Addr()
	}
	return netip.AddrPort{}
}

// Leviathan returns the Leviathan endpoint, or nil when disabled.
func (s *Server) Leviathan() *reflev.Server { return s.lev }

// UDP returns the UDP lobby server, or nil when disabled.
func (s *Server) UDP() *udp.Server { return s.udp }

// TCP returns the TCP lobby server, or nil when disabled.
func (s *Server) TCP() *tcp.Server { return s.tcp }

// Close stops accepting, closes every lobby connection and instance and
// waits for them. It is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.stopCtx != nil {
			s.stopCtx()
		}
		s.mu.Unlock()
		// TCP first: a countdown ending now must not allocate from a
		// closed pool.
		if s.tcp != nil {
			s.tcpStop()
			<-s.tcpDone
			s.tcp.Close() // waits for the Close Serve started to finish
		}
		if s.udp != nil {
			s.udp.Close()
		}
		if s.lev != nil {
			s.lev.Close()
		}
	})
	return nil
}

// Stats is a snapshot of every enabled part's counters (nil when disabled).
type Stats struct {
	UDP *udp.Stats `json:"udp,omitempty"`
	TCP *tcp.Stats `json:"tcp,omitempty"`

	Leviathan *reflev.Stats `json:"leviathan,omitempty"`
}

// Stats returns the counters of the enabled parts: requests by type, drops
// by reason, rate-limited requests, rooms, instances, sessions (UDP);
// frames by type, errors and closes by reason, connections, rooms (TCP).
func (s *Server) Stats() Stats {
	var st Stats
	if s.udp != nil {
		u := s.udp.Stats()
		st.UDP = &u
	}
	if s.tcp != nil {
		t := s.tcp.Stats()
		st.TCP = &t
	}
	if s.lev != nil {
		l := s.lev.Stats()
		st.Leviathan = &l
	}
	return st
}

// WriteText writes every counter as a "name value" line, "udp.", "tcp." and
// "leviathan." prefixed and sorted, for the shutdown summary.
func (st Stats) WriteText(w io.Writer) error {
	if st.UDP != nil {
		if err := st.UDP.WriteText(w, "udp."); err != nil {
			return err
		}
	}
	if st.TCP != nil {
		if err := writeFlat(w, "tcp.", st.TCP.Flat()); err != nil {
			return err
		}
	}
	if st.Leviathan != nil {
		if err := writeFlat(w, "leviathan.", st.Leviathan.Flat()); err != nil {
			return err
		}
	}
	return nil
}

func writeFlat(w io.Writer, prefix string, flat map[string]uint64) error {
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := fmt.Fprintf(w, "%s%s %d\n", prefix, k, flat[k]); err != nil {
			return err
		}
	}
	return nil
}

// Live is what StatsHandler serves: every enabled part's counters and the
// process's goroutine count and heap, for watching a server from outside
// (the soak samples it every 10 s).
type Live struct {
	Stats
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc_bytes"`
	HeapSys    uint64 `json:"heap_sys_bytes"`
}

// StatsHandler serves Live as JSON on GET /stats.
func (s *Server) StatsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live := Live{Stats: s.Stats(), Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, HeapSys: ms.HeapSys}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(&live)
	})
	return mux
}
