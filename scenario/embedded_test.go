package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestEmbeddedServer(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want EmbeddedServer
		errs []string // substrings, one per expected error; nil = must parse
	}{
		{"absent keeps zero", "", EmbeddedServer{}, nil},
		{"every key", `embedded_server:
  rate_limit: 200/s
  rate_burst: 50
  max_instances: 3
  max_players: 2
  countdown_interval: 10ms
  game_length: 1s
  seat_hold: 2s
  cleanup_interval: 500ms
`, EmbeddedServer{RateLimit: 200, RateBurst: 50, MaxInstances: 3, MaxPlayers: 2,
			CountdownInterval: 10 * time.Millisecond, GameLength: time.Second, SeatHold: 2 * time.Second,
			CleanupInterval: 500 * time.Millisecond}, nil},
		{"with a target", "target: 127.0.0.1:9000\nembedded_server: {rate_limit: 10/s}\n", EmbeddedServer{},
			[]string{"embedded_server applies only when no target is given"}},
		{"unknown key", "embedded_server: {rate_limt: 10/s}\n", EmbeddedServer{}, []string{"rate_limt"}},
		{"bad rate", "embedded_server: {rate_limit: fast}\n", EmbeddedServer{}, []string{"embedded_server.rate_limit"}},
		{"zero players", "embedded_server: {max_players: 0}\n", EmbeddedServer{}, []string{"embedded_server.max_players must be between 1"}},
		{"negative duration", "embedded_server: {game_length: -1s}\n", EmbeddedServer{}, []string{"embedded_server.game_length"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.yaml", []byte(minimal+tt.yaml))
			if tt.errs == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if p.Embedded != tt.want {
					t.Fatalf("Embedded = %+v, want %+v", p.Embedded, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("parsed, want errors %q", tt.errs)
			}
			for _, e := range tt.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("errors %q do not mention %q", err, e)
				}
			}
		})
	}
}
