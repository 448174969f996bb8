package levserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// Part is the Leviathan endpoint as a part of the reference server: the
// server half of the leviathan descriptor.
func Part() *refserver.Part {
	return &refserver.Part{
		Name:    lv.ProtocolName,
		Order:   3,
		Default: func() any { c := DefaultConfig(); return &c },
		Loopback: func() any {
			c := DefaultConfig()
			c.Addr = "127.0.0.1:0"
			c.MaxConnsPerIP = -1
			return &c
		},
		Embed: func(cfg any, es scenario.EmbeddedServer) {
			l := cfg.(*Config)
			l.RateLimit, l.RateBurst = es.RateLimit, es.RateBurst
			if es.MaxPlayers > 0 {
				l.MaxPlayers = es.MaxPlayers
			}
		},
		Files:    func(any, int) int { return 1 }, // its one socket
		Off:      refserver.OffFlag{Name: "no-leviathan", Usage: "do not run the Leviathan endpoint"},
		Flags:    flags,
		Start:    startPart,
		NewStats: func() any { return new(Stats) },
		Text: func(st any, w io.Writer, prefix string) error {
			return refserver.WriteFlat(w, prefix, st.(*Stats).Flat())
		},
		Announce: func(_ any, addr netip.AddrPort) string { return fmt.Sprintf("leviathan endpoint on %s", addr) },
	}
}

// ConfigOf returns the Leviathan endpoint's configuration in c, nil when
// disabled.
func ConfigOf(c refserver.Config) *Config { return refserver.PartConfig[Config](c, lv.ProtocolName) }

// StatsOf returns the Leviathan endpoint's counters in st, nil when it did
// not run.
func StatsOf(st refserver.Stats) *Stats { return refserver.PartStats[Stats](st, lv.ProtocolName) }

func startPart(cfg any, logger *slog.Logger, _ map[string]any) (refserver.Running, error) {
	lc := *cfg.(*Config)
	if lc.Logger == nil {
		lc.Logger = logger
	}
	s, err := Start(lc)
	if err != nil {
		return nil, err
	}
	return running{s}, nil
}

// running is a started Leviathan endpoint.
type running struct{ s *Server }

func (r running) Addr() netip.AddrPort { return r.s.Addr() }
func (r running) Stats() any           { st := r.s.Stats(); return &st }
func (r running) Service(string) any   { return nil }
func (r running) Server() any          { return r.s }
func (r running) Close()               { r.s.Close() }

// flags declares serve's flags of the Leviathan endpoint.
func flags(fs *refserver.Flags) func(refserver.FlagEnv) (any, error) {
	l := DefaultConfig()
	addr := fs.String("leviathan-addr", l.Addr, "Leviathan endpoint listen `address`")
	maxPlayers := fs.Int("leviathan-max-players", l.MaxPlayers, "players the Leviathan endpoint admits at once (JoinServer beyond it: ServerDisallow reason 2)")
	rateLimit := fs.Float64("leviathan-rate-limit", refserver.ServeRateLimit, "Leviathan datagrams per second per source IP (0: off)")
	connsPerIP := fs.Int("leviathan-max-conns-per-ip", l.MaxConnsPerIP, "simultaneous Leviathan connections from one source IP (0: no cap)")
	ackReading := fs.String("leviathan-ack-reading", "engine", "how ack bits are read and written: engine (bit b of byte i acks StartAck+8i+b) or seed+1")
	// Shared with the UDP lobby's sockets when it runs too.
	socketBuffer := fs.Int("socket-buffer", l.SocketBuffer, "SO_RCVBUF/SO_SNDBUF `bytes` of the Leviathan endpoint's socket (0: OS default)")
	return func(env refserver.FlagEnv) (any, error) {
		checks := []struct {
			bad  bool
			flag string
			msg  string
		}{
			{!refserver.HostPortOK(*addr), "leviathan-addr", fmt.Sprintf("%q is not HOST:PORT with an IP host", *addr)},
			{*maxPlayers < 1, "leviathan-max-players", "must be at least 1"},
			{*rateLimit < 0, "leviathan-rate-limit", "must not be negative"},
			{*socketBuffer < 0, "socket-buffer", "must not be negative"},
			{*connsPerIP < 0, "leviathan-max-conns-per-ip", "must not be negative (0: no cap)"},
		}
		for _, c := range checks {
			if c.bad {
				return nil, fmt.Errorf("--%s: %s", c.flag, c.msg)
			}
		}
		if !env.On {
			return nil, nil
		}
		ack, err := levconn.ParseAckReading(*ackReading)
		if err != nil {
			return nil, fmt.Errorf("--leviathan-ack-reading: %v", err)
		}
		c := DefaultConfig()
		c.Addr, c.MaxPlayers, c.RateLimit, c.SocketBuffer = *addr, *maxPlayers, *rateLimit, *socketBuffer
		c.Conn.AckReading = ack
		c.MaxConnsPerIP = refserver.NoCap(*connsPerIP)
		return &c, nil
	}
}
