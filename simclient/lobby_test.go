package simclient

import (
	"testing"

	"github.com/lobbybench/lobbybench/scenario"
)

// TestLobbyFor: what ends a member's time to game, per protocol and flow:
// the game start when the member waits for it, else the first of its
// protocol's joins the member runs, else nothing.
func TestLobbyFor(t *testing.T) {
	tests := []struct {
		name     string
		protocol string
		steps    string
		member   int
		join     scenario.StepKind
		game     bool
	}{
		{"udp waits for the game", "udp-lobby", "[create_room: {only: leader}, {join: {room: created}}, hello, instance_join, ready, wait_game_start]", 1, "", true},
		{"udp instance join", "udp-lobby", "[create_room: {only: leader}, {join: {room: created}}, hello, instance_join]", 0, scenario.StepKind("instance_join"), false},
		{"udp hello only", "udp-lobby", "[create_room: {only: leader}, {join: {room: created}}, hello]", 1, scenario.StepKind("hello"), false},
		{"udp lobby only", "udp-lobby", "[list_rooms]", 0, "", false},
		{"tcp member joins", "tcp-lobby", "[connect, create: {only: leader}, {join: {room: created, only: members}}]", 1, scenario.StepKind("join"), false},
		{"tcp creator", "tcp-lobby", "[connect, create: {only: leader}, {join: {room: created, only: members}}]", 0, scenario.StepKind("create_room"), false},
		{"tcp game start", "tcp-lobby", "[connect, create: {only: leader}, {join: {room: created, only: members}}, ready, wait_game_start]", 0, "", true},
		{"leviathan join_game", "leviathan", "[connect, join_server, join_game]", 0, scenario.StepKind("join_game"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scenario.Parse("t.yaml", []byte("protocol: "+tc.protocol+"\nload: {clients: 2, duration: 1s}\nflows:\n  - name: f\n    group_size: 2\n    steps: "+tc.steps+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			d, _ := Describe(string(p.Protocol))
			l := lobbyFor(d.Game, &p.Flows[0], tc.member)
			if l.def == nil || l.ttgJoin != tc.join || l.ttgGame != tc.game {
				t.Errorf("lobbyFor = join %q game %v (def %v), want join %q game %v", l.ttgJoin, l.ttgGame, l.def != nil, tc.join, tc.game)
			}
		})
	}
}
