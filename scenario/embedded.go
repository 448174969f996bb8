package scenario

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// EmbeddedServer holds settings for the reference server that run starts
// in-process when a scenario names no target. Zero fields keep the server's
// loopback defaults (no rate limit, 100 instances of 4 players, 1 s countdown
// ticks). It lets a scenario such as rate-limit-probe find a limit on a fresh
// clone without a server started by hand.
type EmbeddedServer struct {
	RateLimit         float64       // lobby requests/s allowed per source IP; 0 = no limit
	RateBurst         int           // token bucket size; 0 = 2×RateLimit
	MaxInstances      int           // 0 = server default
	MaxPlayers        int           // players per room; 0 = server default
	CountdownInterval time.Duration // 0 = server default
	GameLength        time.Duration // 0 = games never end
	SeatHold          time.Duration // 0 = server default
	CleanupInterval   time.Duration // 0 = server default (500 ms)
}

var embeddedKeys = []string{"rate_limit", "rate_burst", "max_instances", "max_players",
	"countdown_interval", "game_length", "seat_hold", "cleanup_interval"}

func (d *decoder) embedded(n *yaml.Node, target string) EmbeddedServer {
	var e EmbeddedServer
	f, ok := d.mapping(n, "embedded_server", embeddedKeys)
	if !ok {
		return e
	}
	if target != "" {
		d.errf(n, "embedded_server applies only when no target is given (target is %s)", target)
	}
	if v := f.get("rate_limit"); v != nil {
		e.RateLimit, _ = d.rate(v, "embedded_server.rate_limit")
	}
	if v := f.get("rate_burst"); v != nil {
		b, _ := d.integer(v, "embedded_server.rate_burst", 1, 1<<30)
		e.RateBurst = int(b)
	}
	if v := f.get("max_instances"); v != nil {
		m, _ := d.integer(v, "embedded_server.max_instances", 1, 10000)
		e.MaxInstances = int(m)
	}
	if v := f.get("max_players"); v != nil {
		m, _ := d.integer(v, "embedded_server.max_players", 1, 65535)
		e.MaxPlayers = int(m)
	}
	for _, k := range []struct {
		key string
		dst *time.Duration
	}{{"countdown_interval", &e.CountdownInterval}, {"game_length", &e.GameLength}, {"seat_hold", &e.SeatHold}, {"cleanup_interval", &e.CleanupInterval}} {
		if v := f.get(k.key); v != nil {
			dur, ok := d.duration(v, "embedded_server."+k.key)
			if ok && dur < 0 {
				d.errf(v, "embedded_server.%s must not be negative", k.key)
				dur = 0
			}
			*k.dst = dur
		}
	}
	return e
}
