package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/levconn"
	refserver "github.com/lobbybench/lobbybench/reference-server"
	reflev "github.com/lobbybench/lobbybench/reference-server/leviathan"
	"github.com/lobbybench/lobbybench/reference-server/tcp"
	"github.com/lobbybench/lobbybench/reference-server/udp"
	lv "github.com/lobbybench/lobbybench/wire/leviathan"
	"github.com/lobbybench/lobbybench/wire/tcplobby"
	"github.com/lobbybench/lobbybench/wire/udplobby"
)

const serveUsage = `Usage: lobbybench serve [flags]

Runs the bundled reference server: the UDP lobby (udp-lobby.md) with its pool
of UDP game instances, the TCP lobby (tcp-lobby.md) whose GAME_START hands
players over to an instance from the same pool, and the Leviathan
reliable-UDP endpoint (leviathan.md). A port of 0 picks a free one; the chosen
addresses are printed on stderr. SIGINT or SIGTERM stops it cleanly
(exit 0) and prints its counters on stdout.

The UDP lobby and the Leviathan endpoint rate-limit each source IP by
default (1000 requests/s, burst 2000), as udp-lobby.md §14 asks of a server; excess
is dropped silently and counted. A load test that sends more than that from
one address measures the limiter: spread clients over 127.0.0.x (run does
by default) or pass --rate-limit 0 --leviathan-rate-limit 0.

Per-source quotas stop one address from taking a whole pool: UDP rooms
created and seats held, TCP rooms and connections, Leviathan connections
per source IP (the --*-per-ip flags; 0 turns one off). Each default is a
quarter of its pool (a tenth of the TCP connection table), and all but the
TCP rooms' (4 of 16) cover what the 100 clients run puts on each of its
default source addresses need; a TCP load test with more than 4 rooms at
once from one address needs --tcp-max-rooms-per-ip 0.`

// serveFlags holds the serve command's flag values.
type serveFlags struct {
	udpAddr, tcpAddr, advertise, logLevel string
	instanceAddr                          string
	noUDP, noTCP                          bool
	basePort, maxInstances, maxPlayers    int
	maxSessions, rateBurst, socketBuffer  int
	maxConns, maxQueue                    int
	roomsPerIP, holdsPerIP                int
	tcpRoomsPerIP, connsPerIP             int
	levConnsPerIP                         int
	statsAddr                             string
	header                                udplobby.Profile
	rateKey                               udp.RateKey
	rateLimit                             float64
	cleanup, idle, session, seatHold      time.Duration
	countdown, gameLength                 time.Duration
	tcpIdle, writeTimeout                 time.Duration

	levAddr, levAckReading string
	noLev                  bool
	levMaxPlayers          int
	levRateLimit           float64
}

// serveRateLimit is the per-IP request rate serve allows by default on its
// UDP lobby and Leviathan endpoint: far above what one real client sends,
// far below what a flood from one address does. The embedded server of run
// has none unless a scenario's embedded_server asks for one.
const serveRateLimit = 1000

func init() {
	register("serve", command{
		summary: "run the bundled reference lobby and game-instance server",
		usage:   serveUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			u, t, l := udp.DefaultConfig(), tcp.DefaultConfig(), reflev.DefaultConfig()
			f := &serveFlags{header: u.Profile, rateKey: u.RateKey}
			fs.StringVar(&f.udpAddr, "udp-lobby-addr", u.Addr, "UDP lobby listen `address`")
			fs.StringVar(&f.udpAddr, "udp-addr", u.Addr, "old name of --udp-lobby-addr")
			fs.IntVar(&f.basePort, "base-port", u.BasePort, "first `port` of the game-instance pool (0: OS-chosen ports)")
			fs.IntVar(&f.maxInstances, "max-instances", u.MaxInstances, "maximum live game instances (rooms)")
			fs.IntVar(&f.maxPlayers, "max-players", u.MaxPlayers, "players per UDP room")
			fs.IntVar(&f.roomsPerIP, "max-rooms-per-ip", u.MaxRoomsPerIP, "live UDP rooms one source IP may have created (0: no cap)")
			fs.IntVar(&f.holdsPerIP, "max-holds-per-ip", u.MaxHoldsPerIP, "UDP seats one source IP may hold (JOIN_SUCCESS not yet taken at the instance) (0: no cap)")
			fs.Var(&f.header, "header", "UDP header profile: spec or rtype17")
			fs.DurationVar(&f.cleanup, "cleanup-interval", u.CleanupInterval, "how often empty or finished instances are removed (after being so for one interval)")
			fs.DurationVar(&f.idle, "idle-timeout", u.IdleTimeout, "drop an instance player silent this long")
			fs.DurationVar(&f.session, "session-timeout", u.SessionTimeout, "forget a UDP lobby session (retry replay) idle this long")
			fs.IntVar(&f.maxSessions, "max-sessions", u.MaxSessions, "UDP lobby session table bound")
			fs.DurationVar(&f.seatHold, "seat-hold", u.SeatHold, "how long a JOIN_SUCCESS reserves its seat")
			fs.DurationVar(&f.countdown, "countdown-interval", u.CountdownInterval, "time between countdown ticks (UDP instances and TCP lobby)")
			fs.DurationVar(&f.gameLength, "game-length", u.GameLength, "send GAME_END this long after GAME_START (0: games never end)")
			fs.Float64Var(&f.rateLimit, "rate-limit", serveRateLimit, "UDP lobby requests per second per rate key (0: off)")
			fs.IntVar(&f.rateBurst, "rate-burst", u.RateBurst, "rate-limit bucket size (0: twice the rate)")
			fs.Var(&f.rateKey, "rate-key", "what the rate limit counts by: ip or ip:port")
			fs.IntVar(&f.socketBuffer, "socket-buffer", u.SocketBuffer, "SO_RCVBUF/SO_SNDBUF `bytes` of the UDP lobby and every instance socket (0: OS default)")
			fs.StringVar(&f.advertise, "advertise-addr", "", "IP handed to TCP players for the UDP instances (default: the UDP host, or each client's local address)")
			fs.StringVar(&f.tcpAddr, "tcp-lobby-addr", t.Addr, "TCP lobby listen `address`")
			fs.StringVar(&f.tcpAddr, "tcp-addr", t.Addr, "old name of --tcp-lobby-addr")
			fs.IntVar(&f.maxConns, "max-conns", t.MaxConns, "maximum simultaneous TCP connections")
			fs.IntVar(&f.connsPerIP, "max-conns-per-ip", t.MaxConnsPerIP, "simultaneous TCP connections from one source IP (0: no cap)")
			fs.IntVar(&f.tcpRoomsPerIP, "tcp-max-rooms-per-ip", t.MaxRoomsPerIP, "live TCP lobby rooms created from one source IP (0: no cap)")
			fs.DurationVar(&f.tcpIdle, "tcp-idle-timeout", t.IdleTimeout, "close a TCP connection that sends no frame this long (negative: never)")
			fs.DurationVar(&f.writeTimeout, "write-timeout", t.WriteTimeout, "disconnect a TCP client whose socket accepts nothing this long")
			fs.IntVar(&f.maxQueue, "max-queue", t.MaxQueue, "outgoing frames queued per TCP connection before it is dropped")
			fs.BoolVar(&f.noUDP, "no-udp-lobby", false, "do not run the UDP lobby (the TCP lobby then needs --instance-addr)")
			fs.BoolVar(&f.noUDP, "no-udp", false, "old name of --no-udp-lobby")
			fs.StringVar(&f.instanceAddr, "instance-addr", "", "with --no-udp-lobby: the fixed UDP game `address` (IP:PORT) every TCP GAME_START announces")
			fs.BoolVar(&f.noTCP, "no-tcp-lobby", false, "do not run the TCP lobby")
			fs.BoolVar(&f.noTCP, "no-tcp", false, "old name of --no-tcp-lobby")
			fs.StringVar(&f.levAddr, "leviathan-addr", l.Addr, "Leviathan endpoint listen `address`")
			fs.IntVar(&f.levMaxPlayers, "leviathan-max-players", l.MaxPlayers, "players the Leviathan endpoint admits at once (JoinServer beyond it: ServerDisallow reason 2)")
			fs.Float64Var(&f.levRateLimit, "leviathan-rate-limit", serveRateLimit, "Leviathan datagrams per second per source IP (0: off)")
			fs.IntVar(&f.levConnsPerIP, "leviathan-max-conns-per-ip", l.MaxConnsPerIP, "simultaneous Leviathan connections from one source IP (0: no cap)")
			fs.StringVar(&f.levAckReading, "leviathan-ack-reading", "engine", "how ack bits are read and written: engine (bit b of byte i acks StartAck+8i+b) or seed+1")
			fs.BoolVar(&f.noLev, "no-leviathan", false, "do not run the Leviathan endpoint")
			fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
			fs.StringVar(&f.statsAddr, "stats-addr", "", "serve the live counters and the process's goroutine count and heap as JSON on http://`ADDRESS`/stats (default: off)")
			return f.run
		},
	})
}

// config turns the flags into a refserver.Config, or returns a one-line
// error naming the offending flag.
func (f *serveFlags) config(e *env) (refserver.Config, error) {
	var cfg refserver.Config
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return cfg, fmt.Errorf("--log-level: %q is not debug, info, warn or error", f.logLevel)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	if f.noUDP && f.noTCP && f.noLev {
		return cfg, fmt.Errorf("--no-udp-lobby, --no-tcp-lobby and --no-leviathan: nothing left to serve")
	}
	var static netip.AddrPort
	if f.instanceAddr != "" {
		if !f.noUDP {
			return cfg, fmt.Errorf("--instance-addr: only with --no-udp-lobby (the UDP lobby's own instances are used otherwise)")
		}
		a, err := netip.ParseAddrPort(f.instanceAddr)
		if err != nil || a.Port() == 0 {
			return cfg, fmt.Errorf("--instance-addr: %q is not IP:PORT with a non-zero port", f.instanceAddr)
		}
		static = a
	}
	if f.noUDP && !f.noTCP && !static.IsValid() {
		return cfg, fmt.Errorf("--no-udp-lobby: the TCP lobby needs a game address for GAME_START: add --instance-addr IP:PORT (or --no-tcp-lobby)")
	}
	checks := []struct {
		bad  bool
		flag string
		msg  string
	}{
		{!hostPortOK(f.udpAddr), "udp-lobby-addr (--udp-addr)", fmt.Sprintf("%q is not HOST:PORT with an IP host", f.udpAddr)},
		{!hostPortOK(f.tcpAddr), "tcp-lobby-addr (--tcp-addr)", fmt.Sprintf("%q is not HOST:PORT with an IP host", f.tcpAddr)},
		{!hostPortOK(f.levAddr), "leviathan-addr", fmt.Sprintf("%q is not HOST:PORT with an IP host", f.levAddr)},
		{f.levMaxPlayers < 1, "leviathan-max-players", "must be at least 1"},
		{f.levRateLimit < 0, "leviathan-rate-limit", "must not be negative"},
		{f.basePort < 0 || f.basePort > 65535, "base-port", fmt.Sprintf("%d is not a port (0-65535)", f.basePort)},
		{f.maxInstances < 1, "max-instances", fmt.Sprintf("%d: must be at least 1", f.maxInstances)},
		{f.basePort > 0 && f.basePort+f.maxInstances-1 > 65535, "base-port", fmt.Sprintf("%d + %s runs past port 65535", f.basePort, words.Count(f.maxInstances, "instance"))},
		{f.maxPlayers < 1 || f.maxPlayers > 1024, "max-players", fmt.Sprintf("%d not in 1-1024", f.maxPlayers)},
		{f.cleanup <= 0, "cleanup-interval", "must be positive"},
		{f.idle <= 0, "idle-timeout", "must be positive"},
		{f.session <= 0, "session-timeout", "must be positive"},
		{f.maxSessions < 1, "max-sessions", "must be at least 1"},
		{f.seatHold <= 0, "seat-hold", "must be positive"},
		{f.countdown <= 0, "countdown-interval", "must be positive"},
		{f.gameLength < 0, "game-length", "must not be negative"},
		{f.rateLimit < 0, "rate-limit", "must not be negative"},
		{f.rateBurst < 0, "rate-burst", "must not be negative"},
		{f.socketBuffer < 0, "socket-buffer", "must not be negative"},
		{f.maxConns < 1, "max-conns", "must be at least 1"},
		{f.writeTimeout <= 0, "write-timeout", "must be positive"},
		{f.maxQueue < 1, "max-queue", "must be at least 1"},
		{f.roomsPerIP < 0, "max-rooms-per-ip", "must not be negative (0: no cap)"},
		{f.holdsPerIP < 0, "max-holds-per-ip", "must not be negative (0: no cap)"},
		{f.connsPerIP < 0, "max-conns-per-ip", "must not be negative (0: no cap)"},
		{f.tcpRoomsPerIP < 0, "tcp-max-rooms-per-ip", "must not be negative (0: no cap)"},
		{f.levConnsPerIP < 0, "leviathan-max-conns-per-ip", "must not be negative (0: no cap)"},
		{f.statsAddr != "" && !hostPortOK(f.statsAddr), "stats-addr", fmt.Sprintf("%q is not HOST:PORT with an IP host", f.statsAddr)},
	}
	for _, c := range checks {
		if c.bad {
			return cfg, fmt.Errorf("--%s: %s", c.flag, c.msg)
		}
	}
	if !f.noUDP {
		u := udp.DefaultConfig()
		u.Addr, u.BasePort, u.MaxInstances, u.MaxPlayers = f.udpAddr, f.basePort, f.maxInstances, f.maxPlayers
		u.Profile, u.CleanupInterval, u.IdleTimeout = f.header, f.cleanup, f.idle
		u.SessionTimeout, u.MaxSessions, u.SeatHold = f.session, f.maxSessions, f.seatHold
		u.CountdownInterval, u.GameLength = f.countdown, f.gameLength
		u.RateLimit, u.RateBurst, u.RateKey, u.SocketBuffer = f.rateLimit, f.rateBurst, f.rateKey, f.socketBuffer
		u.MaxRoomsPerIP, u.MaxHoldsPerIP = f.roomsPerIP, f.holdsPerIP
		if f.advertise != "" {
			ip, err := netip.ParseAddr(f.advertise)
			if err != nil || ip.IsUnspecified() {
				return cfg, fmt.Errorf("--advertise-addr: %q is not a reachable IP address", f.advertise)
			}
			u.AdvertiseAddr = ip.Unmap()
		}
		if err := u.Validate(); err != nil {
			return cfg, fmt.Errorf("invalid UDP settings: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		cfg.UDP = &u
	}
	if !f.noTCP {
		t := tcp.DefaultConfig()
		t.Addr, t.MaxConns, t.IdleTimeout = f.tcpAddr, f.maxConns, f.tcpIdle
		t.WriteTimeout, t.MaxQueue, t.CountdownInterval = f.writeTimeout, f.maxQueue, f.countdown
		t.MaxConnsPerIP, t.MaxRoomsPerIP = noCap(f.connsPerIP), noCap(f.tcpRoomsPerIP)
		if static.IsValid() {
			t.Pool = tcp.StaticPool{Addr: static}
		}
		cfg.TCP = &t
	}
	if !f.noLev {
		l := reflev.DefaultConfig()
		ack, err := levconn.ParseAckReading(f.levAckReading)
		if err != nil {
			return cfg, fmt.Errorf("--leviathan-ack-reading: %v", err)
		}
		l.Addr, l.MaxPlayers, l.RateLimit, l.SocketBuffer = f.levAddr, f.levMaxPlayers, f.levRateLimit, f.socketBuffer
		l.Conn.AckReading = ack
		l.MaxConnsPerIP = noCap(f.levConnsPerIP)
		cfg.Leviathan = &l
	}
	return cfg, nil
}

// noCap maps a per-IP flag's 0 ("no cap") to the TCP and Leviathan
// configs' negative value (their 0 means "the default").
func noCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// hostPortOK reports whether s is HOST:PORT with an empty, IP or
// "localhost" host.
func hostPortOK(s string) bool {
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

func (f *serveFlags) run(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		return usageErr(e, "serve", "unexpected argument %q", args[0])
	}
	cfg, err := f.config(e)
	if err != nil {
		return usageErr(e, "serve", "%v", err)
	}
	srv, err := refserver.Start(ctx, cfg)
	if err != nil {
		return usageErr(e, "serve", "%v", err)
	}
	if a := srv.Addr(udplobby.ProtocolName); a.IsValid() {
		pool := "instance ports chosen by the OS"
		if f.basePort > 0 {
			pool = fmt.Sprintf("instances on ports %d-%d", f.basePort, f.basePort+f.maxInstances-1)
		}
		fmt.Fprintf(e.stderr, "lobbybench serve: udp lobby on %s (%s, header %s)\n", a, pool, f.header)
	}
	if a := srv.Addr(tcplobby.ProtocolName); a.IsValid() {
		fmt.Fprintf(e.stderr, "lobbybench serve: tcp lobby on %s\n", a)
	}
	if a := srv.Addr(lv.ProtocolName); a.IsValid() {
		fmt.Fprintf(e.stderr, "lobbybench serve: leviathan endpoint on %s\n", a)
	}
	if f.statsAddr != "" {
		ln, err := net.Listen("tcp", f.statsAddr)
		if err != nil {
			srv.Close()
			return usageErr(e, "serve", "--stats-addr: %v", err)
		}
		hs := &http.Server{Handler: srv.StatsHandler(), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(ln)
		defer hs.Close()
		fmt.Fprintf(e.stderr, "lobbybench serve: stats on http://%s/stats\n", ln.Addr())
	}
	<-ctx.Done()
	fmt.Fprintln(e.stderr, "lobbybench serve: shutting down")
	srv.Close()
	if err := srv.Stats().WriteText(e.stdout); err != nil {
		return exitFailed
	}
	return exitOK
}
