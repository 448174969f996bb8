package metrics

import (
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// TestLobbySnapshot: the lobby measures of several recorders come out of
// Snapshot summed: one time-to-game sample per Measure call, players per
// second (those there when the second began plus those who entered),
// bytes per step, and bytes no step owns in the totals only.
func TestLobbySnapshot(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	pp := func(sec, room, game int64) result.PlayersPoint {
		return result.PlayersPoint{Second: sec, InRoom: room, InGame: game}
	}
	type ev struct {
		rec        int
		ms         int
		room, game int64
	}
	tests := []struct {
		name   string
		events []ev
		want   []result.PlayersPoint
	}{
		{"none", nil, nil},
		{"a match within a second", []ev{{0, 100, 1, 0}, {1, 150, 1, 0}, {0, 400, 0, 1}, {1, 420, 0, 1}, {0, 900, -1, -1}, {1, 950, -1, -1}},
			[]result.PlayersPoint{{Second: 0, InRoom: 2, InGame: 2}, {Second: 1}}},
		{"across seconds and recorders", []ev{{0, 100, 1, 0}, {1, 1100, 1, 0}, {1, 1200, 0, 1}, {0, 2500, -1, 0}, {1, 3100, -1, -1}},
			[]result.PlayersPoint{pp(0, 1, 0), pp(1, 2, 1), pp(2, 2, 1), pp(3, 1, 1), pp(4, 0, 0)}},
		{"still there at the end", []ev{{0, 1500, 1, 1}},
			[]result.PlayersPoint{pp(0, 0, 0), pp(1, 1, 1), pp(2, 1, 1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector(start)
			recs := []*Recorder{c.NewRecorder(), c.NewRecorder()}
			for _, e := range tc.events {
				recs[e.rec].Players(at(e.ms), e.room, e.game)
			}
			run, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(run.Players, tc.want) {
				t.Errorf("players %v, want %v", run.Players, tc.want)
			}
		})
	}

	c := NewCollector(start)
	list := c.Step("list_rooms")
	msg := c.Message("LOBBY_LIST_ROOMS")
	var wg sync.WaitGroup
	for range 4 {
		r := c.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				r.Record(list, at(i), at(i), at(i+1))
				r.Record(msg, at(i), at(i), at(i+1))
				r.Bytes(list, 12, 14)
				r.Measure(TimeToGame, time.Duration(i+1)*time.Millisecond)
			}
			r.Bytes(-1, 5, 7) // before any step
			r.Measure(RoomFill, 40*time.Millisecond)
		}()
	}
	wg.Wait()
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := run.Step("list_rooms")
	if s.DataSent != 480 || s.DataReceived != 560 {
		t.Errorf("list_rooms bytes %d/%d, want 480/560", s.DataSent, s.DataReceived)
	}
	if m, _ := run.Message("LOBBY_LIST_ROOMS"); m.DataSent != 0 {
		t.Errorf("a message type has bytes: %d", m.DataSent)
	}
	if run.Totals.DataSent != 500 || run.Totals.DataReceived != 588 {
		t.Errorf("total bytes %d/%d, want 500/588", run.Totals.DataSent, run.Totals.DataReceived)
	}
	if run.TimeToGame == nil || run.TimeToGame.Count != 40 || run.TimeToGame.MinUS != 1000 || run.TimeToGame.MaxUS < 10_000 {
		t.Errorf("time_to_game %+v, want 40 samples from 1 ms to 10 ms", run.TimeToGame)
	}
	if run.RoomFill == nil || run.RoomFill.Count != 4 {
		t.Errorf("room_fill %+v, want 4 samples", run.RoomFill)
	}
}
