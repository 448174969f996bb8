package udpserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// Part is the UDP lobby and its game instances as a part of the reference
// server: the server half of the udp-lobby descriptor. Its instances are
// the pool other parts' games are played on (refserver.ServiceInstancePool).
func Part() *refserver.Part {
	return &refserver.Part{
		Name:     udpwire.ProtocolName,
		Order:    1,
		Provides: []string{refserver.ServiceInstancePool},
		Default:  func() any { c := DefaultConfig(); return &c },
		Loopback: func() any {
			c := DefaultConfig()
			c.Addr = "127.0.0.1:0"
			c.BasePort = 0 // instance ports chosen by the OS
			c.MaxRoomsPerIP, c.MaxHoldsPerIP = 0, 0
			return &c
		},
		Embed: func(cfg any, es scenario.EmbeddedServer) {
			u := cfg.(*Config)
			u.RateLimit, u.RateBurst = es.RateLimit, es.RateBurst
			if es.MaxInstances > 0 {
				u.MaxInstances = es.MaxInstances
			}
			if es.MaxPlayers > 0 {
				u.MaxPlayers = es.MaxPlayers
			}
			if es.CountdownInterval > 0 {
				u.CountdownInterval = es.CountdownInterval
			}
			if es.SeatHold > 0 {
				u.SeatHold = es.SeatHold
			}
			if es.CleanupInterval > 0 {
				u.CleanupInterval = es.CleanupInterval
			}
			u.GameLength = es.GameLength
		},
		// The lobby's socket and one per game instance it may open.
		Files: func(cfg any, _ int) int { return 1 + cfg.(*Config).MaxInstances },
		// An emptied instance goes at the first cleanup pass at least an
		// interval after it emptied: 1.5 intervals on average.
		Rooms: func(cfg any) refserver.RoomLimit {
			c := cfg.(*Config)
			return refserver.RoomLimit{Max: c.MaxInstances, Kept: c.CleanupInterval * 3 / 2}
		},
		Off: refserver.OffFlag{Name: "no-udp-lobby", Usage: "do not run the UDP lobby (the TCP lobby then needs --instance-addr)",
			Old: []string{"no-udp"}},
		Flags: flags,
		Start: func(cfg any, logger *slog.Logger, _ map[string]any) (refserver.Running, error) {
			uc := *cfg.(*Config)
			if uc.Logger == nil {
				uc.Logger = logger
			}
			s, err := Listen(uc)
			if err != nil {
				return nil, err
			}
			return running{s}, nil
		},
		NewStats: func() any { return new(Stats) },
		Text:     func(st any, w io.Writer, prefix string) error { return st.(*Stats).WriteText(w, prefix) },
		Announce: func(cfg any, addr netip.AddrPort) string {
			c := cfg.(*Config)
			pool := "instance ports chosen by the OS"
			if c.BasePort > 0 {
				pool = fmt.Sprintf("instances on ports %d-%d", c.BasePort, c.BasePort+c.MaxInstances-1)
			}
			return fmt.Sprintf("udp lobby on %s (%s, header %s)", addr, pool, c.Profile)
		},
	}
}

// ConfigOf returns the UDP lobby's configuration in c, nil when disabled.
func ConfigOf(c refserver.Config) *Config {
	return refserver.PartConfig[Config](c, udpwire.ProtocolName)
}

// StatsOf returns the UDP lobby's counters in st, nil when it did not run.
func StatsOf(st refserver.Stats) *Stats { return refserver.PartStats[Stats](st, udpwire.ProtocolName) }

// running is a started UDP lobby.
type running struct{ s *Server }

func (r running) Addr() netip.AddrPort { return r.s.Addr() }
func (r running) Stats() any           { st := r.s.Stats(); return &st }
func (r running) Server() any          { return r.s }
func (r running) Close()               { r.s.Close() }

// Service gives the instance pool (the TCP lobby's GAME_START hands its
// players over to an instance from it).
func (r running) Service(name string) any {
	if name == refserver.ServiceInstancePool {
		return r.s
	}
	return nil
}

// flags declares serve's flags of the UDP lobby.
func flags(fs *refserver.Flags) func(refserver.FlagEnv) (any, error) {
	u := DefaultConfig()
	addr := fs.String("udp-lobby-addr", u.Addr, "UDP lobby listen `address`")
	fs.Alias("udp-addr", "udp-lobby-addr")
	basePort := fs.Int("base-port", u.BasePort, "first `port` of the game-instance pool (0: OS-chosen ports)")
	maxInstances := fs.Int("max-instances", u.MaxInstances, "maximum live game instances (rooms)")
	maxPlayers := fs.Int("max-players", u.MaxPlayers, "players per UDP room")
	roomsPerIP := fs.Int("max-rooms-per-ip", u.MaxRoomsPerIP, "live UDP rooms one source IP may have created (0: no cap)")
	holdsPerIP := fs.Int("max-holds-per-ip", u.MaxHoldsPerIP, "UDP seats one source IP may hold (JOIN_SUCCESS not yet taken at the instance) (0: no cap)")
	profile := u.Profile
	header := fs.Var(&profile, "header", "UDP header profile: spec or rtype17").(*udpwire.Profile)
	cleanup := fs.Duration("cleanup-interval", u.CleanupInterval, "how often empty or finished instances are removed (after being so for one interval; a room created at the lobby counts as empty only --seat-hold after its CREATE)")
	idle := fs.Duration("idle-timeout", u.IdleTimeout, "drop an instance player silent this long")
	session := fs.Duration("session-timeout", u.SessionTimeout, "forget a UDP lobby session (retry replay) idle this long")
	maxSessions := fs.Int("max-sessions", u.MaxSessions, "UDP lobby session table bound")
	seatHold := fs.Duration("seat-hold", u.SeatHold, "how long a JOIN_SUCCESS reserves its seat")
	countdown := fs.Duration("countdown-interval", u.CountdownInterval, "time between countdown ticks (UDP instances and TCP lobby)")
	gameLength := fs.Duration("game-length", u.GameLength, "send GAME_END this long after GAME_START (0: games never end)")
	rateLimit := fs.Float64("rate-limit", refserver.ServeRateLimit, "UDP lobby requests per second per rate key (0: off)")
	rateBurst := fs.Int("rate-burst", u.RateBurst, "rate-limit bucket size (0: twice the rate)")
	amplify := fs.Int("amplify-allowance", u.AmplifyAllowance, "`bytes` per second (and bucket size, at least one full room list) a non-loopback source IP may get back from the UDP lobby and its instances beyond 3× what it sent (0: no bound)")
	key := u.RateKey
	rateKey := fs.Var(&key, "rate-key", "what the rate limit counts by: ip or ip:port").(*RateKey)
	socketBuffer := fs.Int("socket-buffer", u.SocketBuffer, "SO_RCVBUF/SO_SNDBUF `bytes` of the UDP lobby and every instance socket (0: OS default)")
	advertise := fs.String("advertise-addr", "", "IP handed to TCP players for the UDP instances (default: the UDP host, or each client's local address)")
	return func(env refserver.FlagEnv) (any, error) {
		checks := []struct {
			bad  bool
			flag string
			msg  string
		}{
			{!refserver.HostPortOK(*addr), "udp-lobby-addr (--udp-addr)", fmt.Sprintf("%q is not HOST:PORT with an IP host", *addr)},
			{*basePort < 0 || *basePort > 65535, "base-port", fmt.Sprintf("%d is not a port (0-65535)", *basePort)},
			{*maxInstances < 1, "max-instances", fmt.Sprintf("%d: must be at least 1", *maxInstances)},
			{*basePort > 0 && *basePort+*maxInstances-1 > 65535, "base-port", fmt.Sprintf("%d + %s runs past port 65535", *basePort, words.Count(*maxInstances, "instance"))},
			{*maxPlayers < 1 || *maxPlayers > 1024, "max-players", fmt.Sprintf("%d not in 1-1024", *maxPlayers)},
			{*cleanup <= 0, "cleanup-interval", "must be positive"},
			{*idle <= 0, "idle-timeout", "must be positive"},
			{*session <= 0, "session-timeout", "must be positive"},
			{*maxSessions < 1, "max-sessions", "must be at least 1"},
			{*seatHold <= 0, "seat-hold", "must be positive"},
			{*countdown <= 0, "countdown-interval", "must be positive"},
			{*gameLength < 0, "game-length", "must not be negative"},
			{*rateLimit < 0, "rate-limit", "must not be negative"},
			{*rateBurst < 0, "rate-burst", "must not be negative"},
			{*amplify < 0, "amplify-allowance", "must not be negative (0: no bound)"},
			{*socketBuffer < 0, "socket-buffer", "must not be negative"},
			{*roomsPerIP < 0, "max-rooms-per-ip", "must not be negative (0: no cap)"},
			{*holdsPerIP < 0, "max-holds-per-ip", "must not be negative (0: no cap)"},
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
		c.Addr, c.BasePort, c.MaxInstances, c.MaxPlayers = *addr, *basePort, *maxInstances, *maxPlayers
		c.Profile, c.CleanupInterval, c.IdleTimeout = *header, *cleanup, *idle
		c.SessionTimeout, c.MaxSessions, c.SeatHold = *session, *maxSessions, *seatHold
		c.CountdownInterval, c.GameLength = *countdown, *gameLength
		c.RateLimit, c.RateBurst, c.RateKey, c.SocketBuffer = *rateLimit, *rateBurst, *rateKey, *socketBuffer
		c.MaxRoomsPerIP, c.MaxHoldsPerIP = *roomsPerIP, *holdsPerIP
		c.AmplifyAllowance = *amplify
		if *amplify == 0 {
			c.AmplifyAllowance = -1 // Config's 0 is the default
		}
		if *advertise != "" {
			ip, err := netip.ParseAddr(*advertise)
			if err != nil || ip.IsUnspecified() {
				return nil, fmt.Errorf("--advertise-addr: %q is not a reachable IP address", *advertise)
			}
			c.AdvertiseAddr = ip.Unmap()
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("invalid UDP settings: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return &c, nil
	}
}
