package udpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// RateKey says what the lobby's rate limiter counts requests by.
type RateKey uint8

const (
	// RateKeyIP gives every client IP one bucket (the seed's advice).
	RateKeyIP RateKey = iota
	// RateKeyIPPort gives every client endpoint (IP and port) one bucket.
	RateKeyIPPort
)

// String returns "ip" or "ip:port".
func (k RateKey) String() string {
	if k == RateKeyIPPort {
		return "ip:port"
	}
	return "ip"
}

// Set implements flag.Value ("ip" or "ip:port").
func (k *RateKey) Set(s string) error {
	switch s {
	case "ip":
		*k = RateKeyIP
	case "ip:port":
		*k = RateKeyIPPort
	default:
		return fmt.Errorf("unknown rate key %q (want ip or ip:port)", s)
	}
	return nil
}

// Config configures a UDP lobby and its game instances. Start from
// DefaultConfig; zero durations and counts are invalid except where noted.
type Config struct {
	// Addr is the lobby's listen address (default ":8080"); port 0 picks a
	// free port. Instances bind to the same host.
	Addr string
	// BasePort is the first port of the instance pool (default 8081); the
	// pool is BasePort .. BasePort+MaxInstances-1 and a freed port is
	// reused. 0 lets the OS pick a free port for every instance.
	BasePort int
	// AdvertiseAddr is the address handed to TCP lobby players for the
	// instances (Allocate). Unset, it is the lobby's host, or 0.0.0.0 when
	// the lobby listens on every address (the TCP lobby then substitutes
	// the local address of each client's connection).
	AdvertiseAddr netip.Addr
	// MaxInstances caps live game instances (rooms); default 100.
	MaxInstances int
	// MaxPlayers is a room's capacity (default 4).
	MaxPlayers int
	// MaxRoomsPerIP caps the live rooms created by lobby CREATEs from one
	// source IP; a CREATE beyond it gets JOIN_FAILED
	// (Stats.Failures[FailRoomsPerIP]) and the quota is given back when a
	// room closes. 0 disables the cap. Default 25: a quarter of the default
	// pool, so one address cannot take every instance (the flood of issue
	// 15 did, keeping everyone else's CREATE failing), and exactly the
	// rooms of 4 that the 100 clients `run` puts on each default source
	// address make.
	MaxRoomsPerIP int
	// MaxHoldsPerIP caps the seats held at once for one source IP by lobby
	// JOIN_SUCCESSes whose player has not reached the instance yet; a JOIN
	// beyond it gets JOIN_FAILED (Stats.Failures[FailHoldsPerIP]). Each
	// hold still expires after SeatHold. 0 disables the cap. Default 100:
	// `run`'s clients per default source address (each holds at most one
	// seat at a time), a quarter of the default pool's 400 seats.
	MaxHoldsPerIP int
	// Profile is the header profile of every datagram (default spec).
	Profile udpwire.Profile
	// CleanupInterval is how often empty and finished instances are looked
	// for; one is removed once it has been empty or finished for a whole
	// interval (default 500ms, not the Lobby System page's 30 s: an
	// abandoned room then holds its instance and its creator's quota for at
	// most a second, so a join storm of 50 rooms/s, the bundled join-storm,
	// needs ~55 of the 100 instances where 30 s would exhaust them in 2 s;
	// a room created at the lobby counts as empty only SeatHold after its
	// CREATE, and a joined one is not empty while a seat is held, so its
	// players still have SeatHold to arrive).
	CleanupInterval time.Duration
	// IdleTimeout drops an instance player silent for that long (default 30s).
	IdleTimeout time.Duration
	// SessionTimeout forgets a lobby session (last sequence, cached reply)
	// idle for that long (default 30s: longer than a client's 3 retries).
	SessionTimeout time.Duration
	// MaxSessions bounds the lobby's session table (default 65536).
	MaxSessions int
	// SeatHold is how long a lobby JOIN_SUCCESS reserves a seat for a
	// player who has not yet joined the instance (default 5s).
	SeatHold time.Duration
	// CountdownInterval is the time between COUNTDOWN_TICK 3, 2, 1 and
	// GAME_START (default 1s).
	CountdownInterval time.Duration
	// GameLength ends a game (GAME_END, room Finished) that long after
	// GAME_START; 0 means games never end (default 0).
	GameLength time.Duration
	// RateLimit is the lobby requests per second allowed per RateKey; 0
	// disables rate limiting (default 0: load tests from one loopback IP
	// would otherwise measure the limiter).
	RateLimit float64
	// RateBurst is the bucket size (default 2×RateLimit, at least 1).
	RateBurst int
	// RateKey is ip (default) or ip:port.
	RateKey RateKey
	// MaxRateKeys bounds the rate limiter's table (default 65536), and the
	// amplification bound's.
	MaxRateKeys int
	// AmplifyAllowance bounds what a source IP gets back from the lobby
	// and the instances together (one budget per IP, Server.reach):
	// AmplificationFactor times the bytes it sent them, plus this many
	// bytes a second, saved up to at most this many (or one full room
	// list, if larger). A LOBBY_ROOM_LIST or an instance message beyond
	// it is not sent
	// (Drops["amplification"]): a 12-byte request draws up to 11 bytes
	// per room, and the protocol has no handshake to prove that a source
	// address receives what is sent there. Loopback sources are exempt
	// (no other machine can send from one). Default 16384; negative
	// disables the bound.
	AmplifyAllowance int
	// SocketBuffer is SO_RCVBUF/SO_SNDBUF of the lobby socket and of every
	// instance socket, in bytes (default 4 MiB; as root the limit in
	// rmem_max is bypassed). 0 keeps the OS default.
	SocketBuffer int
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the documented defaults (udp-lobby.md §16: lobby 8080,
// instances from 8081, at most 100).
func DefaultConfig() Config {
	return Config{
		Addr:              ":8080",
		BasePort:          8081,
		MaxInstances:      100,
		MaxPlayers:        4,
		MaxRoomsPerIP:     25,
		MaxHoldsPerIP:     100,
		Profile:           udpwire.ProfileSpec,
		CleanupInterval:   500 * time.Millisecond,
		IdleTimeout:       30 * time.Second,
		SessionTimeout:    30 * time.Second,
		MaxSessions:       65536,
		SeatHold:          5 * time.Second,
		CountdownInterval: time.Second,
		RateKey:           RateKeyIP,
		MaxRateKeys:       65536,
		AmplifyAllowance:  16384,
		SocketBuffer:      4 << 20,
	}
}

// AmplificationFactor is how many times the bytes of its requests a source
// IP may get back beyond the allowance (Config.AmplifyAllowance): RFC 9000
// §8.1's limit for an address not proven.
const AmplificationFactor = 3

// ampBurst is the amplification bucket's size: the allowance, or one full
// room list of MaxInstances rooms under the larger header if that is
// larger, so that a client can always get the whole list.
func (c *Config) ampBurst() int {
	return max(c.AmplifyAllowance, 17+2+c.MaxInstances*udpwire.RoomEntryLen+4)
}

// maxListRooms keeps a LOBBY_ROOM_LIST within one IPv4 UDP datagram
// (65507 bytes) under the larger rtype17 header.
const maxListRooms = (65507 - 17 - 4 - 2) / udpwire.RoomEntryLen

// Validate reports every problem of c at once, each naming its field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, err := resolveHost(c.Addr); err != nil {
		bad("Addr: %v", err)
	}
	if c.MaxInstances < 1 || c.MaxInstances > maxListRooms {
		bad("MaxInstances: %d not in 1..%d", c.MaxInstances, maxListRooms)
	}
	if c.BasePort < 0 || c.BasePort > 65535 {
		bad("BasePort: %d not in 0..65535", c.BasePort)
	} else if c.BasePort > 0 && c.BasePort+c.MaxInstances-1 > 65535 {
		bad("BasePort: %d + MaxInstances %d runs past port 65535", c.BasePort, c.MaxInstances)
	}
	if c.MaxPlayers < 1 || c.MaxPlayers > 1024 {
		bad("MaxPlayers: %d not in 1..1024", c.MaxPlayers)
	}
	if !c.Profile.Valid() {
		bad("Profile: invalid header profile %d", c.Profile)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"CleanupInterval", c.CleanupInterval},
		{"IdleTimeout", c.IdleTimeout},
		{"SessionTimeout", c.SessionTimeout},
		{"SeatHold", c.SeatHold},
		{"CountdownInterval", c.CountdownInterval},
	} {
		if d.v <= 0 {
			bad("%s: must be > 0, got %v", d.name, d.v)
		}
	}
	if c.GameLength < 0 {
		bad("GameLength: must be >= 0, got %v", c.GameLength)
	}
	if c.MaxRoomsPerIP < 0 {
		bad("MaxRoomsPerIP: must be >= 0, got %d", c.MaxRoomsPerIP)
	}
	if c.MaxHoldsPerIP < 0 {
		bad("MaxHoldsPerIP: must be >= 0, got %d", c.MaxHoldsPerIP)
	}
	if c.MaxSessions < 1 {
		bad("MaxSessions: must be >= 1, got %d", c.MaxSessions)
	}
	c.validateRate(bad)
	if c.SocketBuffer < 0 {
		bad("SocketBuffer: must be >= 0, got %d", c.SocketBuffer)
	}
	if c.AdvertiseAddr.IsValid() && c.AdvertiseAddr.IsUnspecified() {
		bad("AdvertiseAddr: %v is not an address clients can reach", c.AdvertiseAddr)
	}
	return errors.Join(errs...)
}

// validateRate reports the problems of the rate-limit fields through bad.
func (c *Config) validateRate(bad func(format string, a ...any)) {
	if c.RateLimit < 0 {
		bad("RateLimit: must be >= 0, got %v", c.RateLimit)
	}
	if c.RateBurst < 0 {
		bad("RateBurst: must be >= 0, got %d", c.RateBurst)
	}
	if c.RateKey > RateKeyIPPort {
		bad("RateKey: invalid %d", c.RateKey)
	}
	if (c.RateLimit > 0 || c.AmplifyAllowance > 0) && c.MaxRateKeys < 1 {
		bad("MaxRateKeys: must be >= 1, got %d", c.MaxRateKeys)
	}
}

// burst returns the effective bucket size.
func (c *Config) burst() int {
	if c.RateBurst > 0 {
		return c.RateBurst
	}
	return max(1, int(2*c.RateLimit))
}

// resolveHost returns the IP of a "host:port" listen address (the zero
// Addr for an empty host).
func resolveHost(addr string) (netip.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return netip.Addr{}, err
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return netip.Addr{}, fmt.Errorf("bad port %q", port)
	}
	if host == "" {
		return netip.Addr{}, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		if host == "localhost" {
			return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
		}
		return netip.Addr{}, fmt.Errorf("host %q is not an IP address", host)
	}
	return ip.Unmap(), nil
}
