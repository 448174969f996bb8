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
	"strings"
	"sync"

	reflev "github.com/lobbybench/lobbybench/reference-server/leviathan"
	"github.com/lobbybench/lobbybench/reference-server/tcp"
	"github.com/lobbybench/lobbybench/reference-server/udp"
	"github.com/lobbybench/lobbybench/wire/leviathan"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// The parts of the reference server, named after the protocol each serves;
// its counters carry the name ("udp-lobby.requests…" in WriteText) and, with
// '_' for '-', so do the Stats JSON keys ("udp_lobby"). A protocol's
// descriptor (simclient.Protocol.EmbeddedParts) names the parts an
// embedded run of it needs.
const (
	UDPLobby  = udplobby.ProtocolName  // the UDP lobby and its game instances
	TCPLobby  = tcplobby.ProtocolName  // the TCP lobby (its games go to the UDP lobby's instances)
	Leviathan = leviathan.ProtocolName // the Leviathan endpoint
)

// Only returns c with every part not named in parts disabled. An unknown
// name is an error.
func (c Config) Only(parts ...string) (Config, error) {
	keep := map[string]bool{}
	for _, p := range parts {
		if partByName(p) == nil {
			return c, fmt.Errorf("refserver: no part %q (have %s)", p, strings.Join(PartNames(), ", "))
		}
		keep[p] = true
	}
	for _, p := range partTable {
		if !keep[p.name] {
			p.disable(&c)
		}
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
	// running are the started parts, in start order (Close stops them in
	// the reverse order).
	running []*partDef

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
	enabled := 0
	for _, p := range partTable {
		if p.enabled(&cfg) {
			enabled++
		}
	}
	if enabled == 0 {
		return nil, fmt.Errorf("refserver: no part enabled (%s all off)", strings.Join(PartNames(), ", "))
	}
	if cfg.TCP != nil && cfg.UDP == nil && cfg.TCP.Pool == nil {
		return nil, errors.New("refserver: the TCP lobby needs an instance pool: enable UDP or set TCP.Pool")
	}
	s := &Server{}
	for _, p := range partTable {
		if !p.enabled(&cfg) {
			continue
		}
		if err := p.start(s, &cfg); err != nil {
			s.Close()
			return nil, fmt.Errorf("refserver: %w", err)
		}
		s.running = append(s.running, p)
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
	for _, p := range s.running {
		if p.name == part {
			return p.addr(s)
		}
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
		// In reverse start order: the TCP lobby before the UDP lobby, so a
		// countdown ending now does not allocate from a closed pool.
		for k := len(s.running) - 1; k >= 0; k-- {
			s.running[k].close(s)
		}
	})
	return nil
}

// Stats is a snapshot of every enabled part's counters (nil when disabled),
// keyed in JSON by the part's name with '_' for '-'.
type Stats struct {
	UDP *udp.Stats `json:"udp_lobby,omitempty"`
	TCP *tcp.Stats `json:"tcp_lobby,omitempty"`

	Leviathan *reflev.Stats `json:"leviathan,omitempty"`
}

// Stats returns the counters of the enabled parts: requests by type, drops
// by reason, rate-limited requests, rooms, instances, sessions (UDP);
// frames by type, errors and closes by reason, connections, rooms (TCP).
func (s *Server) Stats() Stats {
	var st Stats
	for _, p := range s.running {
		p.stats(s, &st)
	}
	return st
}

// WriteText writes every counter as a "name value" line, prefixed with its
// part's name ("udp-lobby.", "tcp-lobby.", "leviathan.") and sorted, for the
// shutdown summary.
func (st Stats) WriteText(w io.Writer) error {
	for _, p := range partTable {
		if err := p.text(st, w, p.name+"."); err != nil {
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

// partDef is one part of the reference server: how its Config field is
// read, its address, counters and text, and how it stops. The server, the
// embedded runs (Only) and serve iterate over partTable; a new part is its
// Config and Stats fields and one entry here.
type partDef struct {
	name    string
	enabled func(*Config) bool
	disable func(*Config)
	start   func(*Server, *Config) error // cfg.Logger is the default of the part's Logger
	addr    func(*Server) netip.AddrPort
	stats   func(*Server, *Stats)
	text    func(st Stats, w io.Writer, prefix string) error // nothing when the part did not run
	close   func(*Server)
}

// partTable lists the parts in start order.
var partTable = []*partDef{
	{
		name:    UDPLobby,
		enabled: func(c *Config) bool { return c.UDP != nil },
		disable: func(c *Config) { c.UDP = nil },
		start: func(s *Server, cfg *Config) (err error) {
			uc := *cfg.UDP
			if uc.Logger == nil {
				uc.Logger = cfg.Logger
			}
			s.udp, err = udp.Listen(uc)
			return err
		},
		addr:  func(s *Server) netip.AddrPort { return s.udp.Addr() },
		stats: func(s *Server, st *Stats) { u := s.udp.Stats(); st.UDP = &u },
		text: func(st Stats, w io.Writer, prefix string) error {
			if st.UDP == nil {
				return nil
			}
			return st.UDP.WriteText(w, prefix)
		},
		close: func(s *Server) { s.udp.Close() },
	},
	{
		name:    TCPLobby,
		enabled: func(c *Config) bool { return c.TCP != nil },
		disable: func(c *Config) { c.TCP = nil },
		start: func(s *Server, cfg *Config) error {
			tc := *cfg.TCP
			if tc.Logger == nil {
				tc.Logger = cfg.Logger
			}
			if tc.Pool == nil {
				tc.Pool = s.udp // the UDP lobby starts first
			}
			t, err := tcp.Listen(tc)
			if err != nil {
				return err
			}
			s.tcp = t
			// Stopped through its context, not tcp.Server.Close: a Close
			// racing with Serve's start trips the race detector (WaitGroup
			// Add vs Wait inside tcp), while a cancelled context is
			// observed by Serve itself.
			tctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			s.tcpDone, s.tcpStop = done, cancel
			go func() { done <- t.Serve(tctx) }()
			return nil
		},
		addr:  func(s *Server) netip.AddrPort { return s.tcp.Addr() },
		stats: func(s *Server, st *Stats) { t := s.tcp.Stats(); st.TCP = &t },
		text: func(st Stats, w io.Writer, prefix string) error {
			if st.TCP == nil {
				return nil
			}
			return writeFlat(w, prefix, st.TCP.Flat())
		},
		close: func(s *Server) {
			s.tcpStop()
			<-s.tcpDone
			s.tcp.Close() // waits for the Close Serve started to finish
		},
	},
	{
		name:    Leviathan,
		enabled: func(c *Config) bool { return c.Leviathan != nil },
		disable: func(c *Config) { c.Leviathan = nil },
		start: func(s *Server, cfg *Config) (err error) {
			lc := *cfg.Leviathan
			if lc.Logger == nil {
				lc.Logger = cfg.Logger
			}
			s.lev, err = reflev.Start(lc)
			return err
		},
		addr:  func(s *Server) netip.AddrPort { return s.lev.Addr() },
		stats: func(s *Server, st *Stats) { l := s.lev.Stats(); st.Leviathan = &l },
		text: func(st Stats, w io.Writer, prefix string) error {
			if st.Leviathan == nil {
				return nil
			}
			return writeFlat(w, prefix, st.Leviathan.Flat())
		},
		close: func(s *Server) { s.lev.Close() },
	},
}

func partByName(name string) *partDef {
	for _, p := range partTable {
		if p.name == name {
			return p
		}
	}
	return nil
}

// PartNames returns the parts' names, in start order.
func PartNames() []string {
	out := make([]string, len(partTable))
	for i, p := range partTable {
		out[i] = p.name
	}
	return out
}
