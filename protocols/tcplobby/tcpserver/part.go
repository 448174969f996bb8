package tcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// Part is the TCP lobby as a part of the reference server: the server half
// of the tcp-lobby descriptor. Its GAME_START hands players over to a game
// instance from the part that provides refserver.ServiceInstancePool (the
// UDP lobby's pool), unless its Config brings a Pool of its own.
func Part() *refserver.Part {
	return &refserver.Part{
		Name:  tcpwire.ProtocolName,
		Order: 2,
		Needs: []string{refserver.ServiceInstancePool},
		Supplied: func(cfg any, service string) bool {
			return service == refserver.ServiceInstancePool && cfg.(*Config).Pool != nil
		},
		Default: func() any { c := DefaultConfig(); return &c },
		Loopback: func() any {
			c := DefaultConfig()
			c.Addr = "127.0.0.1:0"
			c.MaxConnsPerIP, c.MaxRoomsPerIP = -1, -1
			return &c
		},
		Embed: func(cfg any, es scenario.EmbeddedServer) {
			if es.CountdownInterval > 0 {
				cfg.(*Config).CountdownInterval = es.CountdownInterval
			}
		},
		// The listener and one per connected client.
		Files: func(_ any, clients int) int { return 1 + clients },
		// A room is removed when its last player leaves.
		Rooms:    func(cfg any) refserver.RoomLimit { return refserver.RoomLimit{Max: cfg.(*Config).MaxRooms} },
		Off:      refserver.OffFlag{Name: "no-tcp-lobby", Usage: "do not run the TCP lobby", Old: []string{"no-tcp"}},
		Flags:    flags,
		Start:    start,
		NewStats: func() any { return new(Stats) },
		Text: func(st any, w io.Writer, prefix string) error {
			return refserver.WriteFlat(w, prefix, st.(*Stats).Flat())
		},
		Announce: func(_ any, addr netip.AddrPort) string { return fmt.Sprintf("tcp lobby on %s", addr) },
	}
}

// ConfigOf returns the TCP lobby's configuration in c, nil when disabled.
func ConfigOf(c refserver.Config) *Config {
	return refserver.PartConfig[Config](c, tcpwire.ProtocolName)
}

// StatsOf returns the TCP lobby's counters in st, nil when it did not run.
func StatsOf(st refserver.Stats) *Stats { return refserver.PartStats[Stats](st, tcpwire.ProtocolName) }

// start listens and serves; the pool is the config's own or the provided
// instance pool.
func start(cfg any, logger *slog.Logger, services map[string]any) (refserver.Running, error) {
	tc := *cfg.(*Config)
	if tc.Logger == nil {
		tc.Logger = logger
	}
	if tc.Pool == nil {
		pool, ok := services[refserver.ServiceInstancePool].(InstancePool)
		if !ok {
			return nil, errors.New("the TCP lobby needs an instance pool")
		}
		tc.Pool = pool
	}
	t, err := Listen(tc)
	if err != nil {
		return nil, err
	}
	// Stopped through its context, not Server.Close: a Close racing with
	// Serve's start trips the race detector (WaitGroup Add vs Wait), while
	// a cancelled context is observed by Serve itself.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- t.Serve(ctx) }()
	return &running{s: t, stop: cancel, done: done}, nil
}

// running is a started TCP lobby.
type running struct {
	s    *Server
	stop context.CancelFunc
	done chan error
}

func (r *running) Addr() netip.AddrPort { return r.s.Addr() }
func (r *running) Stats() any           { st := r.s.Stats(); return &st }
func (r *running) Service(string) any   { return nil }
func (r *running) Server() any          { return r.s }

func (r *running) Close() {
	r.stop()
	<-r.done
	r.s.Close() // waits for the Close Serve started to finish
}

// flags declares serve's flags of the TCP lobby.
func flags(fs *refserver.Flags) func(refserver.FlagEnv) (any, error) {
	t := DefaultConfig()
	addr := fs.String("tcp-lobby-addr", t.Addr, "TCP lobby listen `address`")
	fs.Alias("tcp-addr", "tcp-lobby-addr")
	maxConns := fs.Int("max-conns", t.MaxConns, "maximum simultaneous TCP connections")
	connsPerIP := fs.Int("max-conns-per-ip", t.MaxConnsPerIP, "simultaneous TCP connections from one source IP (0: no cap)")
	roomsPerIP := fs.Int("tcp-max-rooms-per-ip", t.MaxRoomsPerIP, "live TCP lobby rooms created from one source IP (0: no cap)")
	idle := fs.Duration("tcp-idle-timeout", t.IdleTimeout, "close a TCP connection that sends no frame this long (negative: never)")
	writeTimeout := fs.Duration("write-timeout", t.WriteTimeout, "disconnect a TCP client whose socket accepts nothing this long")
	maxQueue := fs.Int("max-queue", t.MaxQueue, "outgoing frames queued per TCP connection before it is dropped")
	// Shared with the UDP instances' ticks when the UDP lobby runs too.
	countdown := fs.Duration("countdown-interval", t.CountdownInterval, "time between countdown ticks of the TCP lobby")
	instanceAddr := fs.String("instance-addr", "", "with --no-udp-lobby: the fixed UDP game `address` (IP:PORT) every TCP GAME_START announces")
	return func(env refserver.FlagEnv) (any, error) {
		pooled := env.Provided(refserver.ServiceInstancePool)
		var static netip.AddrPort
		if *instanceAddr != "" {
			if pooled {
				return nil, errors.New("--instance-addr: only with --no-udp-lobby (the UDP lobby's own instances are used otherwise)")
			}
			a, err := netip.ParseAddrPort(*instanceAddr)
			if err != nil || a.Port() == 0 {
				return nil, fmt.Errorf("--instance-addr: %q is not IP:PORT with a non-zero port", *instanceAddr)
			}
			static = a
		}
		if env.On && !pooled && !static.IsValid() {
			return nil, errors.New("--no-udp-lobby: the TCP lobby needs a game address for GAME_START: add --instance-addr IP:PORT (or --no-tcp-lobby)")
		}
		checks := []struct {
			bad  bool
			flag string
			msg  string
		}{
			{!refserver.HostPortOK(*addr), "tcp-lobby-addr (--tcp-addr)", fmt.Sprintf("%q is not HOST:PORT with an IP host", *addr)},
			{*countdown <= 0, "countdown-interval", "must be positive"},
			{*maxConns < 1, "max-conns", "must be at least 1"},
			{*writeTimeout <= 0, "write-timeout", "must be positive"},
			{*maxQueue < 1, "max-queue", "must be at least 1"},
			{*connsPerIP < 0, "max-conns-per-ip", "must not be negative (0: no cap)"},
			{*roomsPerIP < 0, "tcp-max-rooms-per-ip", "must not be negative (0: no cap)"},
		}
		for _, c := range checks {
			if c.bad {
				return nil, fmt.Errorf("--%s: %s", c.flag, c.msg)
			}
		}
		if !env.On {
			return nil, nil
		}
		c := DefaultConfig()
		c.Addr, c.MaxConns, c.IdleTimeout = *addr, *maxConns, *idle
		c.WriteTimeout, c.MaxQueue, c.CountdownInterval = *writeTimeout, *maxQueue, *countdown
		c.MaxConnsPerIP, c.MaxRoomsPerIP = refserver.NoCap(*connsPerIP), refserver.NoCap(*roomsPerIP)
		if static.IsValid() {
			c.Pool = StaticPool{Addr: static}
		}
		return &c, nil
	}
}
