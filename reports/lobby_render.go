package reports

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/result"
)

// How every format shows the lobby measures (lobby.go): the same rows
// and lines, in the terminal's narrow columns, a Markdown table, an HTML
// table with a chart of the players over the run.

// lobbyHeader heads the rows of lobbyRows.
var lobbyHeader = []string{"MEASURE", "N", "p50", "p90", "p99", "MAX"}

// lobbyRows are the duration measures the run recorded, one row each:
// name, sample count and percentiles.
func lobbyRows(run *result.Run) [][]string {
	var rows [][]string
	for _, m := range []struct {
		name string
		l    *result.Latency
	}{{result.MeasureTimeToGame, run.TimeToGame}, {result.MeasureRoomFill, run.RoomFill}} {
		if m.l == nil {
			continue
		}
		l := *m.l
		rows = append(rows, []string{m.name, itoa(l.Count), fmtLat(l, l.P50US), fmtLat(l, l.P90US), fmtLat(l, l.P99US), fmtLat(l, l.MaxUS)})
	}
	return rows
}

// LobbyLines says the players and bytes of run in sentences: "Players
// (per second): peak 12 in a room, 8 in a game", "Data (payload): 12.3
// KiB sent, 45.6 KiB received". None when it recorded neither.
func LobbyLines(run *result.Run) []string {
	var out []string
	if len(run.Players) > 0 {
		room, game := result.PlayersPeak(run.Players)
		out = append(out, fmt.Sprintf("Players (per second): peak %d in a room, %d in a started game", room, game))
	}
	if t := run.Totals; t.DataSent > 0 || t.DataReceived > 0 {
		out = append(out, fmt.Sprintf("Data (UDP/TCP payload): %s sent, %s received", words.Bytes(t.DataSent), words.Bytes(t.DataReceived)))
	}
	return out
}

// byteRows are the steps that sent or received bytes: name, sent,
// received.
func byteRows(run *result.Run) [][]string {
	var rows [][]string
	for _, s := range run.Steps {
		if s.DataSent > 0 || s.DataReceived > 0 {
			rows = append(rows, []string{s.Name, words.Bytes(s.DataSent), words.Bytes(s.DataReceived)})
		}
	}
	return rows
}

// lobbyTitle is the lobby section's title: it names the time to game only
// when rows of it follow (a run with only players or bytes has none).
func lobbyTitle(rows [][]string) string {
	if len(rows) == 0 {
		return "Lobby"
	}
	return "Lobby (time to game from a session's intended start)"
}

// writeLobbyTable writes the lobby measures for the terminal, in columns
// that fit 80 characters, then a blank line; nothing when the run has
// none.
func writeLobbyTable(w io.Writer, run *result.Run) {
	if !run.HasLobby() {
		return
	}
	rows := lobbyRows(run)
	fmt.Fprintf(w, "%s:\n", lobbyTitle(rows))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(rows) > 0 {
		fmt.Fprintln(tw, "  "+strings.Join(lobbyHeader, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, "  "+strings.Join(r, "\t"))
		}
	}
	tw.Flush()
	for _, line := range LobbyLines(run) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if rows := byteRows(run); len(rows) > 0 {
		wide := len("STEP")
		for _, r := range rows {
			wide = max(wide, len(r[0]))
		}
		fmt.Fprintf(w, "  %-*s  %10s  %10s\n", wide, "STEP", "SENT", "RECEIVED")
		for _, r := range rows {
			fmt.Fprintf(w, "  %-*s  %10s  %10s\n", wide, r[0], r[1], r[2])
		}
	}
	fmt.Fprintln(w)
}

// writeLobbyMarkdown writes the lobby measures as a Markdown section.
func writeLobbyMarkdown(w io.Writer, run *result.Run) {
	if !run.HasLobby() {
		return
	}
	rows := lobbyRows(run)
	fmt.Fprintf(w, "\n#### %s\n\n", lobbyTitle(rows))
	if len(rows) > 0 {
		mdTable(w, []string{"Measure", "N", "p50", "p90", "p99", "Max"}, rows)
		fmt.Fprintln(w)
	}
	for _, line := range LobbyLines(run) {
		fmt.Fprintf(w, "- %s.\n", mdInline(line))
	}
	if rows := byteRows(run); len(rows) > 0 {
		fmt.Fprintln(w)
		mdTable(w, []string{"Step", "Sent", "Received"}, rows)
	}
}

// lobbyView is the HTML's lobby section.
type lobbyView struct {
	Title  string
	Header []string
	Rows   [][]string
	Lines  []string
	Bytes  [][]string
	Chart  template.HTML // players over the run
}

// buildLobby returns the HTML's lobby section, nil when the run has none.
func buildLobby(run *result.Run) *lobbyView {
	if !run.HasLobby() {
		return nil
	}
	v := &lobbyView{Rows: lobbyRows(run), Lines: LobbyLines(run), Bytes: byteRows(run)}
	v.Title = lobbyTitle(v.Rows)
	if len(v.Rows) > 0 {
		v.Header = []string{"measure", "samples", "p50", "p90", "p99", "max"}
	}
	v.Chart = playersChart(run.Players, runSpan(run), 960)
	return v
}

// playersChart draws Run.Players: the players in a room and in a started
// game during each second, a point at the middle of each second.
func playersChart(ps []result.PlayersPoint, sp span, width float64) template.HTML {
	if len(ps) == 0 {
		return ""
	}
	var room, game []xy
	peak := 0.0
	for _, p := range ps {
		x := float64(p.Second) + 0.5
		room = append(room, xy{x, float64(p.InRoom)})
		game = append(game, xy{x, float64(p.InGame)})
		peak = math.Max(peak, float64(p.InRoom))
	}
	first, end := sp.cover(0, float64(ps[len(ps)-1].Second+1))
	xt := secondTicks(first, end)
	yv := niceTicks(math.Max(peak, 1), 4)
	var yt []tick
	for _, v := range yv {
		yt = append(yt, tick{v, fmtAxisCount(v)})
	}
	pr, pg := result.PlayersPeak(ps)
	return drawChart("Players in rooms and games", "seconds since start", "players",
		&plot{x0: first, x1: end, y1: yv[len(yv)-1]}, xt, yt,
		[]lineSeries{{Name: "in a room", Colour: colour(0), Points: room}, {Name: "in a started game", Colour: colour(2), Points: game}},
		[]string{fmt.Sprintf("in a room during the second (peak %d)", pr), fmt.Sprintf("in a started game (peak %d)", pg)}, width, 220)
}
