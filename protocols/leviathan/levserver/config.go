package levserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
)

// DefaultPort is the endpoint's default UDP port.
const DefaultPort = 53221

// Config configures a Server. Start from DefaultConfig; zero fields take
// their defaults, except where noted.
type Config struct {
	// Addr is the UDP listen address (default ":53221"; "127.0.0.1:0"
	// picks a free port, read it back with Server.Addr).
	Addr string
	// MaxPlayers is how many players may have joined at once (default
	// 4096); JoinServer beyond it gets ServerDisallow reason ServerFull (2).
	MaxPlayers int
	// NotAccepting makes every JoinServer fail with reason
	// ServerNotAcceptingPlayers (3) (default false: accepting).
	NotAccepting bool
	// MaxConns caps simultaneous connections (default 16384). A new
	// client beyond it is ignored (Stats.Drops["conn-cap"]).
	MaxConns int
	// MaxConnsPerIP caps simultaneous connections from one source IP
	// (default 1024; negative disables). A new client beyond it is ignored
	// (Stats.Drops["conns-per-ip"]). The default is a quarter of
	// MaxPlayers' default, so one address cannot take every player slot
	// (nor the connection table), and ten times the 100 clients `run` puts
	// on each default source address.
	MaxConnsPerIP int
	// HandshakeTimeout drops a connection not authenticated this long
	// after its first datagram (default 10s; negative disables), so
	// half-open connections cannot hold the connection table.
	HandshakeTimeout time.Duration
	// RateLimit is datagrams per second allowed per client IP; 0 disables
	// (default: load tests from one loopback address would measure the
	// limiter). Excess datagrams are dropped (Stats.Drops["rate-limited"]).
	RateLimit float64
	// RateBurst is the bucket size (default 2×RateLimit, at least 1).
	RateBurst int
	// MaxRateKeys bounds the rate limiter's table (default 65536).
	MaxRateKeys int
	// TickInterval is how often connection timers (resends, ack flushes,
	// timeouts) are run (default 20ms).
	TickInterval time.Duration
	// SocketBuffer is SO_RCVBUF/SO_SNDBUF in bytes (default 4 MiB; 0 keeps
	// the OS default; as root the rmem_max limit is bypassed).
	SocketBuffer int
	// Name is the ServerStatus name (default "lobbybench reference").
	Name string
	// Conn configures each connection's engine (zero fields: the engine's
	// defaults, MaxInFlight 32). Its AckReading is the endpoint's.
	Conn levconn.Config
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Addr:             fmt.Sprintf(":%d", DefaultPort),
		MaxPlayers:       4096,
		MaxConns:         16384,
		MaxConnsPerIP:    1024,
		HandshakeTimeout: 10 * time.Second,
		MaxRateKeys:      65536,
		TickInterval:     20 * time.Millisecond,
		SocketBuffer:     4 << 20,
		Name:             "lobbybench reference",
		Conn:             levconn.Config{MaxInFlight: 32},
	}
}

// withDefaults fills zero fields and reports every invalid one.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Addr == "" {
		c.Addr = d.Addr
	}
	if c.MaxPlayers == 0 {
		c.MaxPlayers = d.MaxPlayers
	}
	if c.MaxConns == 0 {
		c.MaxConns = d.MaxConns
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = d.MaxConnsPerIP
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	if c.MaxRateKeys == 0 {
		c.MaxRateKeys = d.MaxRateKeys
	}
	if c.TickInterval == 0 {
		c.TickInterval = d.TickInterval
	}
	if c.Name == "" {
		c.Name = d.Name
	}
	if c.Conn.MaxInFlight == 0 {
		c.Conn.MaxInFlight = d.Conn.MaxInFlight
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("leviathan: "+format, a...)) }
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("Addr %q: %v", c.Addr, err)
	}
	if c.MaxPlayers < 1 || c.MaxPlayers > 1<<30 {
		bad("MaxPlayers %d not in 1..%d", c.MaxPlayers, 1<<30)
	}
	if c.MaxConns < 1 {
		bad("MaxConns %d must be at least 1", c.MaxConns)
	}
	if c.RateLimit < 0 {
		bad("RateLimit %v is negative", c.RateLimit)
	}
	if c.RateBurst < 0 {
		bad("RateBurst %d is negative", c.RateBurst)
	}
	if c.MaxRateKeys < 1 {
		bad("MaxRateKeys %d must be at least 1", c.MaxRateKeys)
	}
	if c.TickInterval < time.Millisecond {
		bad("TickInterval %v below 1ms", c.TickInterval)
	}
	if c.SocketBuffer < 0 {
		bad("SocketBuffer %d is negative", c.SocketBuffer)
	}
	if len(c.Name) > 1024 {
		bad("Name longer than 1024 bytes")
	}
	cc, err := c.Conn.WithDefaults()
	if err != nil {
		bad("Conn: %v", err)
	}
	c.Conn = cc
	return c, errors.Join(errs...)
}

func (c *Config) burst() int {
	if c.RateBurst > 0 {
		return c.RateBurst
	}
	return max(1, int(2*c.RateLimit))
}
