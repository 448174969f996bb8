package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// sampleLobbyRun is sampleRun with every lobby measure recorded.
func sampleLobbyRun(t *testing.T) *result.Run {
	r := sampleRun(t)
	var err error
	if r.TimeToGame, err = result.NewMeasure(histOf(t, ramp(900_000, 50_000, 40)...)); err != nil {
		t.Fatal(err)
	}
	if r.RoomFill, err = result.NewMeasure(histOf(t, ramp(20_000, 5_000, 10)...)); err != nil {
		t.Fatal(err)
	}
	r.Players = []result.PlayersPoint{{Second: 0, InRoom: 12}, {Second: 1, InRoom: 20, InGame: 8}, {Second: 2, InRoom: 8, InGame: 8}, {Second: 3}}
	r.Steps[0].DataSent, r.Steps[0].DataReceived = 1200, 1400
	r.Steps[1].DataSent, r.Steps[1].DataReceived = 600, 2_500_000
	r.Totals.DataSent, r.Totals.DataReceived = 1800, 2_501_400
	r.Thresholds = append(r.Thresholds,
		result.ThresholdResult{Name: "time_to_game.p99 < 5s", Metric: "time_to_game.p99", Op: "<", Limit: 5, Observed: float64(r.TimeToGame.P99US) / 1e6, Pass: true},
		result.ThresholdResult{Name: "data_sent < 1000", Metric: "data_sent", Op: "<", Limit: 1000, Observed: 1800})
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

// A run with bytes but no game (a list_rooms poll): each format's lobby
// section is there, for the bytes, and its title does not promise a time
// to game that no row gives.
func TestLobbyTitleWithoutGames(t *testing.T) {
	run := sampleRun(t)
	run.Steps[0].DataSent, run.Steps[0].DataReceived = 1200, 1400
	run.Totals.DataSent, run.Totals.DataReceived = 1200, 1400
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { writeLobbyTable(b, run); return nil }},
		{"markdown", func(b *bytes.Buffer) error { writeLobbyMarkdown(b, run); return nil }},
		{"html", func(b *bytes.Buffer) error { return WriteHTML(b, HTMLOptions{}, run) }},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "1.2 KiB sent") {
			t.Errorf("%s: no lobby section with the bytes:\n%s", tc.name, b.String())
		}
		if strings.Contains(b.String(), "time to game") {
			t.Errorf("%s: the title promises a time to game the run has none of:\n%s", tc.name, b.String())
		}
	}
}
