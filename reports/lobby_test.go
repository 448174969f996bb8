package reports

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

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
	if err := WriteJSON(&buf, m); err != nil {
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

// sampleLobbyRun is sampleRun with every lobby measure recorded.
func sampleLobbyRun(t *testing.T) *Run {
	r := sampleRun(t)
	var err error
	if r.TimeToGame, err = NewMeasure(histOf(t, ramp(900_000, 50_000, 40)...)); err != nil {
		t.Fatal(err)
	}
	if r.RoomFill, err = NewMeasure(histOf(t, ramp(20_000, 5_000, 10)...)); err != nil {
		t.Fatal(err)
	}
	r.Players = []PlayersPoint{{0, 12, 0}, {1, 20, 8}, {2, 8, 8}, {3, 0, 0}}
	r.Steps[0].DataSent, r.Steps[0].DataReceived = 1200, 1400
	r.Steps[1].DataSent, r.Steps[1].DataReceived = 600, 2_500_000
	r.Totals.DataSent, r.Totals.DataReceived = 1800, 2_501_400
	r.Thresholds = append(r.Thresholds,
		ThresholdResult{Name: "time_to_game.p99 < 5s", Metric: "time_to_game.p99", Op: "<", Limit: 5, Observed: float64(r.TimeToGame.P99US) / 1e6, Pass: true},
		ThresholdResult{Name: "data_sent < 1000", Metric: "data_sent", Op: "<", Limit: 1000, Observed: 1800})
	return r
}

// TestLobbyGolden: the terminal table, the Markdown and the HTML show the
// lobby measures (rows of time to game and room fill, the players' peaks
// and chart, bytes in total and per step, thresholds on them in bytes).
// The goldens hold the lobby section alone; the whole documents must
// contain it.
func TestLobbyGolden(t *testing.T) {
	run := sampleLobbyRun(t)
	section := func(page []byte) []byte {
		i := bytes.Index(page, []byte("<h3>Lobby"))
		if i < 0 {
			t.Fatal("the HTML has no lobby section")
		}
		j := bytes.Index(page[i+1:], []byte("<h3>"))
		if j < 0 {
			t.Fatal("the HTML's lobby section is last")
		}
		return page[i : i+1+j]
	}
	for _, tc := range []struct {
		file        string
		part, whole func(*bytes.Buffer) error
		fromWhole   func([]byte) []byte
	}{
		{file: "run_lobby.txt",
			part:  func(b *bytes.Buffer) error { writeLobbyTable(b, run); return nil },
			whole: func(b *bytes.Buffer) error { return WriteRunTable(b, run) }},
		{file: "run_lobby.md",
			part:  func(b *bytes.Buffer) error { writeLobbyMarkdown(b, run); return nil },
			whole: func(b *bytes.Buffer) error { return WriteRunMarkdown(b, run) }},
		{file: "run_lobby.html", fromWhole: section,
			whole: func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, run) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var whole bytes.Buffer
			if err := tc.whole(&whole); err != nil {
				t.Fatal(err)
			}
			var part []byte
			if tc.fromWhole != nil {
				part = tc.fromWhole(whole.Bytes())
			} else {
				var b bytes.Buffer
				if err := tc.part(&b); err != nil {
					t.Fatal(err)
				}
				part = b.Bytes()
				if !bytes.Contains(whole.Bytes(), part) {
					t.Errorf("the whole document lacks the lobby section:\n%s", whole.Bytes())
				}
			}
			for _, want := range []string{"time_to_game", "room_fill", "peak 20 in a room, 8 in a started game", "1.8 KiB sent, 2.4 MiB received"} {
				if !bytes.Contains(part, []byte(want)) {
					t.Errorf("%s lacks %q", tc.file, want)
				}
			}
			if !bytes.Contains(whole.Bytes(), []byte("1.8 KiB")) || !bytes.Contains(whole.Bytes(), []byte("1000 B")) {
				t.Errorf("%s: the data_sent threshold is not shown in bytes", tc.file)
			}
			golden.Check(t, filepath.Join("testdata", tc.file), part)
		})
	}
	// The terminal's lobby lines fit 80 columns.
	var b bytes.Buffer
	writeLobbyTable(&b, run)
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
}
