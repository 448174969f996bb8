package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The lobby's own measures: what a player feels, beside the latency of
// each request. A run records them (metrics.Recorder) as
//
//   - Run.TimeToGame: per session, from its intended start to its game's
//     start, or, in a flow that waits for no game start, to its join of
//     the game's room or instance (simclient/lobby.go defines both per
//     protocol); one sample per session that got there.
//   - Run.RoomFill: per room a group flow (group_size) created, from its
//     creator's reply to the success of the group's last join; one sample
//     per room that filled.
//   - Run.Players: per second, the players in a room and in a started
//     game, as the simulated clients know them.
//   - Totals.DataSent/DataReceived and Series.DataSent/DataReceived: the
//     payload bytes the simulated clients sent and received.
//
// Merge merges them exactly: histograms merged, players summed per
// second, bytes summed.

// Metric names of the lobby measures, as thresholds, the JSON and every
// format name them.
const (
	MeasureTimeToGame   = "time_to_game"
	MeasureRoomFill     = "room_fill"
	MeasureDataSent     = "data_sent"
	MeasureDataReceived = "data_received"
)

// PlayersPoint is one second of Run.Players: the players in a room
// (InRoom: between a create or join that put them there and their leave,
// disconnect or session end) and in a started game (InGame, a part of
// InRoom: from the game start they received) at some moment of second
// [Second, Second+1) since the run's start: those there when it began
// plus those who entered during it (a player who entered twice counts
// twice). The series is dense from second 0 to the second after the last
// change, which holds the players still there when the run ended; both
// sums add up across shards.
type PlayersPoint struct {
	Second int64 `json:"second"`
	InRoom int64 `json:"in_room"`
	InGame int64 `json:"in_game"`
}

// PlayersPeak returns the highest InRoom and InGame of ps (each at its
// own second).
func PlayersPeak(ps []PlayersPoint) (inRoom, inGame int64) {
	for _, p := range ps {
		inRoom = max(inRoom, p.InRoom)
		inGame = max(inGame, p.InGame)
	}
	return inRoom, inGame
}

// HasLobby reports whether r recorded any lobby measure.
func (r *Run) HasLobby() bool {
	return r.TimeToGame != nil || r.RoomFill != nil || len(r.Players) > 0 ||
		r.Totals.DataSent > 0 || r.Totals.DataReceived > 0
}

// NewMeasure summarises h as a lobby measure: nil when h holds nothing.
func NewMeasure(h *hdrhistogram.Histogram) (*Latency, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	l, err := NewLatency(h)
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// lobbyMerger merges the lobby measures of Merge's runs.
type lobbyMerger struct {
	ttg, fill *hdrhistogram.Histogram
	players   [][]PlayersPoint
}

func newLobbyMerger() *lobbyMerger {
	return &lobbyMerger{ttg: NewLatencyHistogram(), fill: NewLatencyHistogram()}
}

// add takes run i's measures.
func (m *lobbyMerger) add(i int, r *Run) error {
	for _, p := range []struct {
		name string
		dst  *hdrhistogram.Histogram
		src  *Latency
	}{{MeasureTimeToGame, m.ttg, r.TimeToGame}, {MeasureRoomFill, m.fill, r.RoomFill}} {
		if p.src == nil {
			continue
		}
		h, err := p.src.Histogram()
		if err != nil {
			return fmt.Errorf("reports: merge run %d %s: %w", i, p.name, err)
		}
		if d := p.dst.Merge(h); d != 0 {
			return fmt.Errorf("reports: merge run %d %s: %d values out of range", i, p.name, d)
		}
	}
	if len(r.Players) > 0 {
		m.players = append(m.players, r.Players)
	}
	return nil
}

// result stores the merged measures in out.
func (m *lobbyMerger) result(out *Run) error {
	var err error
	if out.TimeToGame, err = NewMeasure(m.ttg); err != nil {
		return err
	}
	if out.RoomFill, err = NewMeasure(m.fill); err != nil {
		return err
	}
	out.Players = SumPlayers(m.players...)
	return nil
}

// SumPlayers adds player series second by second: a series that ends
// before another keeps its last value (the players still in a room when it
// ended, nobody entering after), a second it skips keeps the value before
// it. nil for none.
func SumPlayers(series ...[]PlayersPoint) []PlayersPoint {
	last := int64(-1)
	for _, s := range series {
		if n := len(s); n > 0 {
			last = max(last, s[n-1].Second)
		}
	}
	if last < 0 {
		return nil
	}
	out := make([]PlayersPoint, last+1)
	for i := range out {
		out[i].Second = int64(i)
	}
	for _, s := range series {
		var cur PlayersPoint
		j := 0
		for sec := int64(0); sec <= last; sec++ {
			for j < len(s) && s[j].Second <= sec {
				cur = s[j]
				j++
			}
			out[sec].InRoom += cur.InRoom
			out[sec].InGame += cur.InGame
		}
	}
	return out
}
