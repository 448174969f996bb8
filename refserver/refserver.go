// Package refserver runs the bundled reference server: one part per
// protocol (the UDP lobby with its game instances, the TCP lobby, the
// Leviathan endpoint), each registered by its protocol's descriptor
// (package protocols) and wired to the parts it needs: the TCP lobby's
// GAME_START hands players over to an instance from the UDP lobby's pool.
// `lobbybench serve` runs it as a process (ServeFlags makes its
// configuration); `lobbybench run` embeds it (Loopback) when a scenario
// names no target. This package names no protocol: what a part is, its
// configuration, flags and counters are the part's (Part).
package refserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// ServiceInstancePool is what a part offering game instances to another
// part's players provides (the UDP lobby's pool, which the TCP lobby's
// GAME_START hands its players over to): a value with the methods of
// protocols/tcplobby/tcpserver's InstancePool and Releaser.
const ServiceInstancePool = "instance-pool"

// ServeRateLimit is the per-source request rate `serve` allows by default
// on the parts that rate-limit (the UDP lobby, the Leviathan endpoint): far
// above what one real client sends, far below what a flood from one
// address does. The embedded server of run has none unless a scenario's
// embedded_server asks for one.
const ServeRateLimit = 1000

// Part is one part of the reference server: the server of one protocol, as
// its descriptor gives it. Its configuration and counters are values of its
// own types, which only it (and its protocol's packages) read inside.
type Part struct {
	// Name is its protocol's name. Its counters carry it
	// ("udp-lobby.requests…" in WriteText) and, with '_' for '-', so do
	// the Stats JSON keys ("udp_lobby").
	Name string
	// Order places it among the parts (documentation order, lowest first):
	// listings, counters, and the start of parts that need nothing of each
	// other.
	Order int
	// Provides names what the running part offers other parts
	// (Running.Service), e.g. ServiceInstancePool.
	Provides []string
	// Needs names what the part takes from a part that Provides it, unless
	// its configuration brings its own (Supplied): the providing part
	// then starts before it and stops after it, and Only keeps it.
	Needs []string
	// Supplied reports whether cfg brings its own service (the TCP lobby's
	// Pool set), so that no part need provide it. Nil: never.
	Supplied func(cfg any, service string) bool
	// Default is the configuration `serve` starts from (its documented
	// defaults); Loopback the embedded mode's (free 127.0.0.1 ports, no
	// logs, no rate limit, no per-source quotas: a load test run against
	// it measures the server, not the defences `serve` has against one
	// abusive address). Each returns a new pointer to the part's own
	// configuration type.
	Default, Loopback func() any
	// Embed applies a scenario's embedded_server settings to cfg (a
	// Loopback configuration). Nil: they do not apply to the part.
	Embed func(cfg any, es scenario.EmbeddedServer)
	// Files estimates the file descriptors the part takes with clients
	// connected.
	Files func(cfg any, clients int) int
	// Rooms is how many rooms the part holds at once and how long, on
	// average, an emptied one is kept before its slot comes back
	// (`describe` sets a scenario's rooms against them). Nil: the part
	// has no rooms a scenario creates.
	Rooms func(cfg any) RoomLimit
	// Off is serve's flag that turns the part off (--no-udp-lobby), with
	// its usage and older names.
	Off OffFlag
	// Flags declares serve's flags of the part (Flags shares a flag two
	// parts read); the function returned, called after parsing, checks
	// them and, when the part runs (env.On), makes its configuration, or
	// returns an error naming the flag.
	Flags func(fs *Flags) func(env FlagEnv) (cfg any, err error)
	// Start starts the part with cfg (its own configuration type); logger
	// is for a configuration whose own Logger is nil; services holds what
	// it Needs, from the parts started before it.
	Start func(cfg any, logger *slog.Logger, services map[string]any) (Running, error)
	// NewStats returns a new pointer to the part's counters type, for
	// reading Stats back from JSON.
	NewStats func() any
	// Text writes the part's counters (a Running's Stats) as "name value"
	// lines prefixed with prefix, sorted.
	Text func(stats any, w io.Writer, prefix string) error
	// Announce is serve's line on stderr for the part running at addr
	// with cfg ("udp lobby on 0.0.0.0:8080 (…)").
	Announce func(cfg any, addr netip.AddrPort) string
}

// OffFlag is a part's serve flag that turns it off.
type OffFlag struct {
	Name  string   // e.g. "no-udp-lobby"
	Usage string   // its help line
	Old   []string // older names, each "old name of --Name"
}

// Running is a started part.
type Running interface {
	// Addr is the address the part listens on.
	Addr() netip.AddrPort
	// Stats returns a pointer to a snapshot of its counters (its own
	// type, which encodes to JSON).
	Stats() any
	// Service returns what it Provides under name (nil: nothing).
	Service(name string) any
	// Server returns the part's own server (e.g. *udp.Server), for its
	// protocol's packages and tests.
	Server() any
	// Close stops it and waits for it.
	Close()
}

var (
	partsMu sync.RWMutex
	parts   = map[string]*Part{}
)

// Register adds p to the reference server. It panics on a second
// registration of a name or a part without its functions: programming
// errors of the protocol descriptor's init (protocols.Register calls it).
func Register(p *Part) {
	if p.Name == "" || p.Default == nil || p.Loopback == nil || p.Start == nil || p.NewStats == nil || p.Text == nil ||
		p.Flags == nil || p.Off.Name == "" || p.Announce == nil {
		panic(fmt.Sprintf("refserver: part %q lacks a name or a function", p.Name))
	}
	partsMu.Lock()
	defer partsMu.Unlock()
	if _, dup := parts[p.Name]; dup {
		panic(fmt.Sprintf("refserver: part %q registered twice", p.Name))
	}
	parts[p.Name] = p
}

// registered returns the parts in Order (then name).
func registered() []*Part {
	partsMu.RLock()
	defer partsMu.RUnlock()
	out := make([]*Part, 0, len(parts))
	for _, p := range parts {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Part) int {
		if c := cmp.Compare(a.Order, b.Order); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

func partByName(name string) *Part {
	partsMu.RLock()
	defer partsMu.RUnlock()
	return parts[name]
}

// PartNames returns the registered parts' names, in Order.
func PartNames() []string {
	var out []string
	for _, p := range registered() {
		out = append(out, p.Name)
	}
	return out
}

// OffFlags returns serve's flags that turn off every registered part but
// those named in keep ("--no-tcp-lobby"), in Order: what a command line
// that serves only the parts in keep, whatever parts are linked, passes.
func OffFlags(keep ...string) []string {
	var out []string
	for _, p := range registered() {
		if !slices.Contains(keep, p.Name) {
			out = append(out, "--"+p.Off.Name)
		}
	}
	return out
}

// Config selects and configures the parts to run.
type Config struct {
	// Parts maps a part's name to its configuration (a pointer to the
	// part's own type, e.g. *udp.Config); a part absent or nil is
	// disabled. PartConfig reads one as its type.
	Parts map[string]any
	// Logger is used by parts whose own Logger is nil; nil discards logs.
	Logger *slog.Logger
}

// PartConfig returns the configuration of part name in c as its own type
// T, nil when the part is disabled (or its configuration not a *T).
func PartConfig[T any](c Config, name string) *T {
	t, _ := c.Parts[name].(*T)
	return t
}

// on returns the configuration of part p, nil when disabled.
func (c Config) on(p *Part) any {
	if cfg := c.Parts[p.Name]; cfg != nil && !isNilPtr(cfg) {
		return cfg
	}
	return nil
}

// isNilPtr reports a typed nil pointer (a part set to (*udp.Config)(nil)).
func isNilPtr(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// DefaultConfig enables every registered part with its documented
// defaults (Part.Default).
func DefaultConfig() Config { return allParts(func(p *Part) any { return p.Default() }) }

// Loopback is the embedded mode's configuration: every registered part on
// free 127.0.0.1 ports (Part.Loopback).
func Loopback() Config { return allParts(func(p *Part) any { return p.Loopback() }) }

func allParts(cfg func(*Part) any) Config {
	c := Config{Parts: map[string]any{}}
	for _, p := range registered() {
		c.Parts[p.Name] = cfg(p)
	}
	return c
}

// Only returns c with every part not named in names disabled, except the
// parts that provide what a kept part needs and does not bring itself
// (Part.Needs: the TCP lobby keeps the UDP lobby for its instances). An
// unknown name is an error.
func (c Config) Only(names ...string) (Config, error) {
	keep := map[string]bool{}
	for _, n := range names {
		if partByName(n) == nil {
			return c, fmt.Errorf("refserver: no part %q (have %s)", n, strings.Join(PartNames(), ", "))
		}
		keep[n] = true
	}
	all := registered()
	for changed := true; changed; {
		changed = false
		for _, p := range all {
			if !keep[p.Name] || c.on(p) == nil {
				continue
			}
			for _, need := range p.Needs {
				if p.Supplied != nil && p.Supplied(c.on(p), need) {
					continue
				}
				for _, q := range all {
					if slices.Contains(q.Provides, need) && !keep[q.Name] {
						keep[q.Name], changed = true, true
					}
				}
			}
		}
	}
	out := Config{Parts: map[string]any{}, Logger: c.Logger}
	for n, cfg := range c.Parts {
		if keep[n] {
			out.Parts[n] = cfg
		}
	}
	return out, nil
}

// Embed applies a scenario's embedded_server settings to every enabled
// part of c (Part.Embed).
func (c Config) Embed(es scenario.EmbeddedServer) {
	for _, p := range registered() {
		if cfg := c.on(p); cfg != nil && p.Embed != nil {
			p.Embed(cfg, es)
		}
	}
}

// Files estimates the file descriptors the enabled parts of c take with
// clients connected (Part.Files).
func (c Config) Files(clients int) int {
	n := 0
	for _, p := range registered() {
		if cfg := c.on(p); cfg != nil && p.Files != nil {
			n += p.Files(cfg, clients)
		}
	}
	return n
}

// RoomLimit is a part's room capacity (Part.Rooms).
type RoomLimit struct {
	Max  int           // rooms at once
	Kept time.Duration // mean time an emptied room still holds its slot
}

// Rooms returns the room capacity of part name in c; false when the part
// is disabled or has no rooms.
func (c Config) Rooms(name string) (RoomLimit, bool) {
	for _, p := range registered() {
		if cfg := c.on(p); p.Name == name && cfg != nil && p.Rooms != nil {
			return p.Rooms(cfg), true
		}
	}
	return RoomLimit{}, false
}

// Server is a running reference server.
type Server struct {
	// running are the started parts, in start order (Close stops them in
	// the reverse order).
	running   []runningPart
	closeOnce sync.Once

	mu      sync.Mutex
	stopCtx func() bool // unregisters Close from the context
}

type runningPart struct {
	part *Part
	cfg  any
	run  Running
}

// Start validates cfg and starts the enabled parts on their addresses (port
// 0 picks a free one; read them back with Addr), each after the parts that
// provide what it needs. The server runs until ctx is done or Close is
// called.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	var todo []*Part
	for n := range cfg.Parts {
		if partByName(n) == nil {
			return nil, fmt.Errorf("refserver: no part %q (have %s)", n, strings.Join(PartNames(), ", "))
		}
	}
	for _, p := range registered() {
		if cfg.on(p) != nil {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("refserver: no part enabled (%s all off)", strings.Join(PartNames(), ", "))
	}
	// The providers of each part's needs, among the enabled parts.
	provider := map[string]*Part{}
	needs := map[*Part][]string{}
	for _, p := range todo {
		for _, s := range p.Provides {
			if provider[s] == nil {
				provider[s] = p
			}
		}
	}
	for _, p := range todo {
		for _, need := range p.Needs {
			if p.Supplied != nil && p.Supplied(cfg.on(p), need) {
				continue
			}
			if provider[need] == nil {
				return nil, fmt.Errorf("refserver: %s needs an %s: enable a part that provides one, or configure its own", p.Name, need)
			}
			needs[p] = append(needs[p], need)
		}
	}
	s := &Server{}
	started := map[*Part]Running{}
	for len(started) < len(todo) {
		var next *Part
		for _, p := range todo {
			if started[p] != nil {
				continue
			}
			ready := true
			for _, need := range needs[p] {
				ready = ready && started[provider[need]] != nil
			}
			if ready {
				next = p
				break
			}
		}
		if next == nil {
			s.Close()
			return nil, errors.New("refserver: the parts' needs form a cycle")
		}
		services := map[string]any{}
		for _, need := range needs[next] {
			services[need] = started[provider[need]].Service(need)
		}
		r, err := next.Start(cfg.on(next), cfg.Logger, services)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("refserver: %w", err)
		}
		started[next] = r
		s.running = append(s.running, runningPart{part: next, cfg: cfg.on(next), run: r})
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Lock()
	s.stopCtx = stop
	s.mu.Unlock()
	return s, nil
}

// Addr returns the address of part name, or the zero value when that part
// is not running or unknown.
func (s *Server) Addr(name string) netip.AddrPort {
	for _, r := range s.running {
		if r.part.Name == name {
			return r.run.Addr()
		}
	}
	return netip.AddrPort{}
}

// Part returns the server of part name (Running.Server, e.g. *udp.Server),
// nil when it is not running.
func (s *Server) Part(name string) any {
	for _, r := range s.running {
		if r.part.Name == name {
			return r.run.Server()
		}
	}
	return nil
}

// Announce returns, for each running part in start order, what serve says
// of it on stderr (Part.Announce).
func (s *Server) Announce() []string {
	var out []string
	for _, r := range s.running {
		out = append(out, r.part.Announce(r.cfg, r.run.Addr()))
	}
	return out
}

// Close stops every part and waits for them, in reverse start order: a
// part before the parts it needs (the TCP lobby before the UDP lobby, so a
// countdown ending now does not allocate from a closed pool). It is
// idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.stopCtx != nil {
			s.stopCtx()
		}
		s.mu.Unlock()
		for k := len(s.running) - 1; k >= 0; k-- {
			s.running[k].run.Close()
		}
	})
	return nil
}

// Stats is a snapshot of the counters of the parts that ran, by part name,
// each a pointer to the part's own counters type (udp.Stats, …; PartStats
// reads one). In JSON it is an object keyed by the part's name with '_'
// for '-', in part order.
type Stats map[string]any

// PartStats returns the counters of part name in st as its own type T,
// nil when the part did not run.
func PartStats[T any](st Stats, name string) *T {
	t, _ := st[name].(*T)
	return t
}

// Stats returns the counters of the running parts: requests by type, drops
// by reason, rooms, instances, sessions, connections … as each part counts.
func (s *Server) Stats() Stats {
	st := Stats{}
	for _, r := range s.running {
		st[r.part.Name] = r.run.Stats()
	}
	return st
}

// jsonKey is a part's key in the Stats JSON.
func jsonKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// names returns st's part names in part order (unknown names last, sorted).
func (st Stats) names() []string {
	var out []string
	for _, p := range registered() {
		if _, ok := st[p.Name]; ok {
			out = append(out, p.Name)
		}
	}
	var rest []string
	for n := range st {
		if partByName(n) == nil {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// MarshalJSON writes {"udp_lobby": {…}, …} in part order.
func (st Stats) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, n := range st.names() {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(jsonKey(n))
		v, err := json.Marshal(st[n])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON wrote, each part's counters into its
// own type (Part.NewStats); keys of parts this program does not have are
// kept as raw JSON.
func (st *Stats) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	byKey := map[string]*Part{}
	for _, p := range registered() {
		byKey[jsonKey(p.Name)] = p
	}
	*st = Stats{}
	for k, v := range raw {
		p := byKey[k]
		if p == nil {
			(*st)[k] = v
			continue
		}
		s := p.NewStats()
		if err := json.Unmarshal(v, s); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		(*st)[p.Name] = s
	}
	return nil
}

// WriteText writes every counter as a "name value" line, prefixed with its
// part's name ("udp-lobby.", "tcp-lobby.", …) and sorted within each part,
// parts in part order, for the shutdown summary.
func (st Stats) WriteText(w io.Writer) error {
	for _, n := range st.names() {
		p := partByName(n)
		if p == nil || st[n] == nil {
			continue
		}
		if err := p.Text(st[n], w, n+"."); err != nil {
			return err
		}
	}
	return nil
}

// WriteFlat writes flat's counters as "prefix+name value" lines, sorted:
// the Text of a part whose counters flatten to a map.
func WriteFlat(w io.Writer, prefix string, flat map[string]uint64) error {
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

// Live is what StatsHandler serves: every running part's counters and the
// process's goroutine count and heap, for watching a server from outside
// (the soak samples it every 10 s).
type Live struct {
	Stats      Stats
	Goroutines int
	HeapAlloc  uint64
	HeapSys    uint64
}

// liveTail are Live's own fields, after the parts' counters in its JSON.
type liveTail struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc_bytes"`
	HeapSys    uint64 `json:"heap_sys_bytes"`
}

// MarshalJSON writes one object: the parts' counters keyed as in Stats,
// then goroutines, heap_alloc_bytes and heap_sys_bytes.
func (l Live) MarshalJSON() ([]byte, error) {
	st, err := l.Stats.MarshalJSON()
	if err != nil {
		return nil, err
	}
	tail, err := json.Marshal(liveTail{l.Goroutines, l.HeapAlloc, l.HeapSys})
	if err != nil {
		return nil, err
	}
	if len(st) > 2 {
		st = append(st[:len(st)-1], ',')
	} else {
		st = st[:1]
	}
	return append(st, tail[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (l *Live) UnmarshalJSON(b []byte) error {
	var tail liveTail
	if err := json.Unmarshal(b, &tail); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, k := range []string{"goroutines", "heap_alloc_bytes", "heap_sys_bytes"} {
		delete(raw, k)
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := l.Stats.UnmarshalJSON(rest); err != nil {
		return err
	}
	l.Goroutines, l.HeapAlloc, l.HeapSys = tail.Goroutines, tail.HeapAlloc, tail.HeapSys
	return nil
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

// HostPortOK reports whether s is HOST:PORT with an empty, IP or
// "localhost" host: what serve's address flags take.
func HostPortOK(s string) bool {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
		return false
	}
	if h == "" || h == "localhost" {
		return true
	}
	_, err = netip.ParseAddr(h)
	return err == nil
}

// NoCap maps a per-source flag's 0 ("no cap") to the configurations whose
// 0 means "the default" and negative "no cap".
func NoCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
