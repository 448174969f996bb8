package engine

import (
	"context"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

// TestLobbyMeasures runs flows against the embedded reference server and
// checks the lobby's own measures by counts and order, never by time:
// time to game has one sample per session that reached its game (or its
// join, without a game start), room fill one per group whose every join
// succeeded, the players series starts and ends empty and never has more
// players in games than in rooms, and the bytes of the steps add up to
// the run's.
func TestLobbyMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs full matches against the embedded server")
	}
	waitsInParallel(t)
	cases := []struct {
		name string
		yaml string
		// ttgStep is the step whose successes are the sessions that
		// reached their game; joinStep the join whose successes fill
		// rooms, joiners the members of a group that join ("": none).
		ttgStep, joinStep string
		joiners           int64
		game              bool // some player was in a started game
	}{
		{name: "udp full match", ttgStep: "wait_game_start", joinStep: "join", joiners: 4, game: true, yaml: `
protocol: udp-lobby
seed: 3
embedded_server: {countdown_interval: 50ms}
load: {rate: 8/s, duration: 1s, max_clients: 100}
flows:
  - name: match
    group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - barrier: {n: 4, timeout: 10s}
      - ready
      - wait_game_start: 10s
      - leave: {reason: 0}
thresholds:
  - time_to_game.p99 < 1h
  - room_fill.count >= 2
  - data_sent > 0
  - wait_game_start.data_received > 0
`},
		{name: "udp without game start", ttgStep: "instance_join", joinStep: "join", joiners: 4, yaml: `
protocol: udp-lobby
seed: 4
load: {rate: 8/s, duration: 1s, max_clients: 100}
flows:
  - name: lobby
    group_size: 4
    steps:
      - create_room: {only: leader}
      - join: {room: created}
      - hello
      - instance_join
      - leave: {reason: 0}
`},
		{name: "tcp full match", ttgStep: "wait_game_start", joinStep: "join", joiners: 3, game: true, yaml: `
protocol: tcp-lobby
seed: 5
embedded_server: {countdown_interval: 50ms}
load: {rate: 8/s, duration: 1s, max_clients: 100}
flows:
  - name: match
    group_size: 4
    steps:
      - connect: {name: bench}
      - create: {name: storm-room, only: leader}
      - join: {room: created, only: members}
      - barrier: 4
      - ready
      - barrier: {n: 4, label: all_ready}
      - start: {only: leader}
      - wait_countdown: 10s
      - wait_game_start: 10s
      - disconnect
`},
		{name: "leviathan join", ttgStep: "join_game", game: true, yaml: `
protocol: leviathan
seed: 6
load: {rate: 10/s, duration: 1s, max_clients: 100}
flows:
  - name: joiner
    steps:
      - connect: {name: bench}
      - join_server
      - join_game: {options: ""}
      - echo: {count: 2, interval: 10ms}
      - close
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			waitsInParallel(t)
			plan := mustPlan(t, tc.yaml)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := Run(ctx, Config{Plan: plan})
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range res.Thresholds {
				if !th.Pass {
					t.Errorf("threshold %q failed: observed %v (no data: %v)", th.Name, th.Observed, th.NoData)
				}
			}
			if res.Totals.Failures != 0 {
				t.Fatalf("failures %v: the counts below assume a clean run", res.Totals.FailuresByReason)
			}
			st, ok := res.Step(tc.ttgStep)
			if !ok || st.Successes == 0 {
				t.Fatalf("step %s: %+v", tc.ttgStep, st)
			}
			if res.TimeToGame == nil || res.TimeToGame.Count != st.Successes {
				t.Errorf("time_to_game %+v, want %d samples (the sessions whose %s succeeded)", res.TimeToGame, st.Successes, tc.ttgStep)
			}
			if tc.joinStep != "" {
				js, _ := res.Step(tc.joinStep)
				if want := js.Successes / tc.joiners; res.RoomFill == nil || want == 0 || res.RoomFill.Count != want {
					t.Errorf("room_fill %+v, want %d samples (%d joins, %d a room)", res.RoomFill, want, js.Successes, tc.joiners)
				}
			} else if res.RoomFill != nil {
				t.Errorf("room_fill %+v in a flow without groups", res.RoomFill)
			}
			ps := res.Players
			if len(ps) == 0 {
				t.Fatal("no players series")
			}
			for i, p := range ps {
				if p.Second != int64(i) || p.InGame > p.InRoom || p.InGame < 0 {
					t.Errorf("players[%d] = %+v: want second %d, 0 <= in_game <= in_room", i, p, i)
				}
			}
			if last := ps[len(ps)-1]; last.InRoom != 0 || last.InGame != 0 {
				t.Errorf("players at the end %+v: every session left", last)
			}
			room, game := result.PlayersPeak(ps)
			if room == 0 || (game > 0) != tc.game {
				t.Errorf("players peak: %d in rooms, %d in games (want some in games: %v)", room, game, tc.game)
			}
			var sent, recv int64
			for _, s := range res.Steps {
				sent += s.DataSent
				recv += s.DataReceived
			}
			if sent == 0 || recv == 0 || res.Totals.DataSent < sent || res.Totals.DataReceived < recv {
				t.Errorf("bytes: totals %d/%d, steps %d/%d", res.Totals.DataSent, res.Totals.DataReceived, sent, recv)
			}
		})
	}
}

// TestLobbyBytesExact: a flow of list_rooms against an empty lobby sends
// 12-byte LOBBY_LIST_ROOMS datagrams and receives 14-byte empty
// LOBBY_ROOM_LISTs (spec header profile), so the run's bytes are known
// exactly from its request count; the reachability check's own LIST is
// not counted.
func TestLobbyBytesExact(t *testing.T) {
	waitsInParallel(t)
	plan := mustPlan(t, `
protocol: udp-lobby
seed: 1
load: {rate: 20/s, duration: 1s, max_clients: 100}
flows:
  - name: p
    steps:
      - list_rooms
      - list_rooms: {label: again}
thresholds:
  - data_sent >= 480
  - again.data_received >= 280
  - time_to_game.count == 0
  - time_to_game.p99 < 1h
`)
	res, err := Run(context.Background(), Config{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	list := int64(len(udpwire.AppendListRooms(nil, udpwire.ProfileSpec, 1)))
	empty, err := udpwire.AppendRoomList(nil, udpwire.ProfileSpec, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if list != 12 || len(empty) != 14 {
		t.Fatalf("datagram sizes %d and %d, want 12 and 14", list, len(empty))
	}
	var sent, recv int64
	for _, name := range []string{"list_rooms", "again"} {
		s, ok := res.Step(name)
		if !ok || s.Successes != 20 {
			t.Fatalf("step %s: %+v", name, s)
		}
		if want := list * (s.Requests + s.Retries); s.DataSent != want {
			t.Errorf("%s data_sent %d, want %d (%d sends × %d bytes)", name, s.DataSent, want, s.Requests+s.Retries, list)
		}
		if want := int64(len(empty)) * s.Successes; s.DataReceived != want {
			t.Errorf("%s data_received %d, want %d", name, s.DataReceived, want)
		}
		sent += s.DataSent
		recv += s.DataReceived
	}
	if res.Totals.DataSent != sent || res.Totals.DataReceived != recv {
		t.Errorf("totals %d/%d, want the steps' %d/%d", res.Totals.DataSent, res.Totals.DataReceived, sent, recv)
	}
	for i, want := range []bool{true, true, true, false} { // no session reached a game: no p99
		if th := res.Thresholds[i]; th.Pass != want {
			t.Errorf("threshold %q: pass %v, want %v (observed %v)", th.Name, th.Pass, want, th.Observed)
		}
	}
	if res.TimeToGame != nil || res.RoomFill != nil || len(res.Players) != 0 {
		t.Errorf("lobby measures in a flow that joins nothing: %+v %+v %v", res.TimeToGame, res.RoomFill, res.Players)
	}
}
