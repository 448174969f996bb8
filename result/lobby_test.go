package result

import (
	"bytes"
	"reflect"
	"testing"
)

// TestMergeLobby: Merge merges the lobby measures exactly: the histograms
// as if one recorder had seen every sample, the players summed second by
// second (a shard's series that ended keeps its last value), the bytes
// summed in the totals and per step.
func TestMergeLobby(t *testing.T) {
	a := lobbyRun(t, []int64{1_000_000, 2_000_000, 3_500_000}, []int64{40_000},
		[]PlayersPoint{{0, 4, 0}, {1, 8, 4}, {2, 4, 4}, {3, 0, 0}}, 1200, 3400)
	b := lobbyRun(t, []int64{1_500_000, 9_000_000}, nil,
		[]PlayersPoint{{0, 0, 0}, {1, 4, 0}, {2, 4, 4}, {3, 4, 4}, {4, 4, 4}, {5, 2, 2}}, 800, 600)
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	wantTTG := latencyOf(t, 1_000_000, 2_000_000, 3_500_000, 1_500_000, 9_000_000)
	if m.TimeToGame == nil || !reflect.DeepEqual(*m.TimeToGame, wantTTG) {
		t.Errorf("time_to_game %+v, want %+v", m.TimeToGame, wantTTG)
	}
	if want := latencyOf(t, 40_000); m.RoomFill == nil || !reflect.DeepEqual(*m.RoomFill, want) {
		t.Errorf("room_fill %+v, want %+v (b recorded none)", m.RoomFill, want)
	}
	wantPlayers := []PlayersPoint{{0, 4, 0}, {1, 12, 4}, {2, 8, 8}, {3, 4, 4}, {4, 4, 4}, {5, 2, 2}}
	if !reflect.DeepEqual(m.Players, wantPlayers) {
		t.Errorf("players %v, want %v", m.Players, wantPlayers)
	}
	if m.Totals.DataSent != 2000 || m.Totals.DataReceived != 4000 {
		t.Errorf("totals bytes %d/%d, want 2000/4000", m.Totals.DataSent, m.Totals.DataReceived)
	}
	if s, _ := m.Step("join"); s.DataSent != 1000 || s.DataReceived != 2000 {
		t.Errorf("join bytes %d/%d, want 1000/2000", s.DataSent, s.DataReceived)
	}
	// Merging in the other order, or a merge with a run that recorded
	// nothing of them, changes nothing.
	m2, err := Merge(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m2.TimeToGame, m.TimeToGame) || !reflect.DeepEqual(m2.Players, m.Players) {
		t.Errorf("the merge depends on the order: %+v %v", m2.TimeToGame, m2.Players)
	}
	empty := lobbyRun(t, nil, nil, nil, 0, 0)
	m3, err := Merge(a, empty)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m3.TimeToGame, a.TimeToGame) || !reflect.DeepEqual(m3.Players, a.Players) || m3.Totals.DataSent != 1200 {
		t.Errorf("merge with an empty run: %+v %v %d", m3.TimeToGame, m3.Players, m3.Totals.DataSent)
	}
	if m4, err := Merge(empty, empty); err != nil || m4.TimeToGame != nil || m4.RoomFill != nil || m4.Players != nil || m4.HasLobby() {
		t.Errorf("merge of runs without measures: %v %+v", err, m4)
	}
	// The JSON keeps them, and reads back to the same figures.
	var buf bytes.Buffer
	if err := writeJSON(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRun(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.TimeToGame, m.TimeToGame) || !reflect.DeepEqual(back.Players, m.Players) || back.Totals.DataReceived != 4000 {
		t.Errorf("JSON round trip: %+v %v", back.TimeToGame, back.Players)
	}
}

func TestSumPlayers(t *testing.T) {
	tests := []struct {
		name string
		in   [][]PlayersPoint
		want []PlayersPoint
	}{
		{"none", nil, nil},
		{"one", [][]PlayersPoint{{{0, 1, 0}, {1, 0, 0}}}, []PlayersPoint{{0, 1, 0}, {1, 0, 0}}},
		{"a skipped second keeps the value before it", [][]PlayersPoint{{{0, 2, 1}, {2, 3, 3}}, {{0, 1, 1}, {1, 1, 0}}},
			[]PlayersPoint{{0, 3, 2}, {1, 3, 1}, {2, 4, 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SumPlayers(tc.in...); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SumPlayers = %v, want %v", got, tc.want)
			}
		})
	}
}

// lobbyRun is a run with every lobby measure: time to game and room fill
// from the given samples (µs; none: not recorded), players, bytes.
func lobbyRun(t testing.TB, ttg, fill []int64, players []PlayersPoint, sent, recv int64) *Run {
	t.Helper()
	r := NewRun()
	r.StartedAt = fixedStart
	r.Steps = []Series{{Name: "join", Requests: 4, Successes: 4, FailuresByReason: map[string]int64{},
		Latency: latencyOf(t, 100, 200, 300, 400), DataSent: sent / 2, DataReceived: recv / 2}}
	r.Messages = []Series{}
	r.Totals.Requests, r.Totals.Successes = 4, 4
	r.Totals.DataSent, r.Totals.DataReceived = sent, recv
	var err error
	if r.TimeToGame, err = NewMeasure(histOf(t, ttg...)); err != nil {
		t.Fatal(err)
	}
	if r.RoomFill, err = NewMeasure(histOf(t, fill...)); err != nil {
		t.Fatal(err)
	}
	r.Players = players
	return r
}
