package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"

	"github.com/lobbybench/lobbybench/internal/observe"
	"github.com/lobbybench/lobbybench/refserver"
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

// serveFlags holds the serve command's flag values: its own, and the
// parts' (each part of the reference server declares its flags:
// refserver.ServeFlags).
type serveFlags struct {
	logLevel, statsAddr string
	parts               func() (refserver.Config, error)
}

func init() {
	register("serve", command{
		summary: "run the bundled reference lobby and game-instance server",
		usage:   serveUsage,
		flags: func(fs *flag.FlagSet) func(context.Context, *env, []string) int {
			f := &serveFlags{}
			f.parts = refserver.ServeFlags(fs)
			fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
			fs.StringVar(&f.statsAddr, "stats-addr", "", "serve the live counters and the process's goroutine count and heap as JSON on http://`ADDRESS`/stats (default: off)")
			return f.run
		},
	})
}

// config turns the flags into a refserver.Config, or returns a one-line
// error naming the offending flag.
func (f *serveFlags) config(e *env) (refserver.Config, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return refserver.Config{}, fmt.Errorf("--log-level: %q is not debug, info, warn or error", f.logLevel)
	}
	cfg, err := f.parts()
	if err != nil {
		return cfg, err
	}
	if f.statsAddr != "" && !refserver.HostPortOK(f.statsAddr) {
		return cfg, fmt.Errorf("--stats-addr: %q is not HOST:PORT with an IP host", f.statsAddr)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	return cfg, nil
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
	for _, line := range srv.Announce() {
		fmt.Fprintf(e.stderr, "lobbybench serve: %s\n", line)
	}
	if f.statsAddr != "" {
		ln, err := net.Listen("tcp", f.statsAddr)
		if err != nil {
			srv.Close()
			return usageErr(e, "serve", "--stats-addr: %v", err)
		}
		hs := observe.Serve(ln, srv.StatsHandler(), nil)
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
