package udpclient

import (
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestRefusalNamed: a refused request fails its step with a
// simclient.Refusal naming what the server answered to which request, and
// for a refused create the pool and the settings that govern it.
func TestRefusalNamed(t *testing.T) {
	refuseCreates := func(f *fakeLobby) {
		f.lobbyHook = func(f *fakeLobby, m *udpwire.Message, def []byte) []byte {
			if m.Type == udpwire.LobbyCreateRoom {
				return udpwire.AppendJoinFailed(nil, f.p, m.Seq)
			}
			return def
		}
	}
	denyJoins := func(f *fakeLobby) {
		f.instHook = func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte {
			if m.Type == udpwire.ClientJoinRequest {
				b, _ := udpwire.AppendEmpty(nil, f.p, udpwire.ServerJoinDeny, m.Seq)
				return b
			}
			return def
		}
	}
	for _, tt := range []struct {
		name  string
		flow  string
		setup func(f *fakeLobby)
		want  []string
	}{
		{"create refused", "- create_room", refuseCreates, []string{"step 1 (create_room): join_failed: the server answered LOBBY_JOIN_FAILED to LOBBY_CREATE_ROOM",
			"no free instance (the pool is full", "udp-lobby.failures.max-instances", "--max-instances", "--cleanup-interval", "--max-rooms-per-ip", "max_instances", "lobbybench describe"}},
		{"join refused", "- join: 12345", func(*fakeLobby) {}, []string{"the server answered LOBBY_JOIN_FAILED to LOBBY_JOIN_ROOM", "the room is missing, full"}},
		{"instance denies", "- create_room\n      - hello\n      - instance_join", denyJoins,
			[]string{"the server answered SERVER_JOIN_DENY to CLIENT_JOIN_REQUEST", "the instance refused the player"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeLobby(t, udpwire.ProfileSpec, tt.setup)
			p := plan(t, "defaults: {timeout: 200ms, retries: 2, retry_interval: 10ms}\n", "  - steps:\n      "+tt.flow+"\n")
			r := runSessions(t, p, f.addr(), 1, simclient.Options{Tick: time.Millisecond})
			err := r.errs[0]
			if !simclient.IsRefusal(err) {
				t.Fatalf("error %v is no refusal", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
