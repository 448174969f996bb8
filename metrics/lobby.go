package metrics

import (
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/reports"
)

// Measure names one of the lobby's own duration measures
// (reports.MeasureTimeToGame, reports.MeasureRoomFill).
type Measure uint8

// Lobby measures a Recorder keeps (Recorder.Measure).
const (
	TimeToGame Measure = iota // a session's intended start to its game start (or join)
	RoomFill                  // a room's creation to its group's last join
	numMeasures
)

// lobby is what a Recorder keeps of the lobby measures. Callers hold the
// Recorder's mutex.
type lobby struct {
	hist [numMeasures]*hdrhistogram.Histogram
	// players holds, per second, the change of the players in a room and
	// in a game (Recorder.Players): summed over recorders and seconds, it
	// gives the level at the end of each second.
	players map[int64]*[2]int64
	// bytes no step owns (sent before a session's first step ended).
	sent, received int64
}

// Measure records one sample d of measure m (one per session for
// TimeToGame, one per room for RoomFill), clamped to [0,
// reports.HighestUS] µs. It allocates only the first time m is recorded.
func (r *Recorder) Measure(m Measure, d time.Duration) {
	if m >= numMeasures {
		return
	}
	us := min(toUS(d), reports.HighestUS)
	r.mu.Lock()
	h := r.lobby.hist[m]
	if h == nil {
		h = reports.NewLatencyHistogram()
		r.lobby.hist[m] = h
	}
	_ = h.RecordValue(us)
	r.mu.Unlock()
}

// Players records, at at, a change of the players in a room (room: +1
// entered, -1 left) and in a started game (game). Callers keep each
// session's changes balanced: a session that entered leaves once.
func (r *Recorder) Players(at time.Time, room, game int64) {
	if room == 0 && game == 0 {
		return
	}
	sec := r.secondOf(at)
	r.mu.Lock()
	if r.lobby.players == nil {
		r.lobby.players = map[int64]*[2]int64{}
	}
	d := r.lobby.players[sec]
	if d == nil {
		d = new([2]int64)
		r.lobby.players[sec] = d
	}
	d[0] += room
	d[1] += game
	r.mu.Unlock()
}

// Bytes adds payload bytes sent and received by a simulated client to
// step key k (k < 0: to the run's totals only, no step owning them).
// Clients count their bytes with atomic adds and hand them over once per
// step (simclient.IOCount), so this takes the recorder's lock once per
// step, not per datagram.
func (r *Recorder) Bytes(k Key, sent, received int64) {
	if sent == 0 && received == 0 {
		return
	}
	r.mu.Lock()
	if k >= 0 {
		s := r.stats(k)
		s.bytesSent += sent
		s.bytesReceived += received
	} else {
		r.lobby.sent += sent
		r.lobby.received += received
	}
	r.mu.Unlock()
}

// lobbyAcc sums the lobby measures of every recorder for Snapshot.
type lobbyAcc struct {
	hist           [numMeasures]*hdrhistogram.Histogram
	players        map[int64][2]int64
	sent, received int64
}

// add takes r's lobby measures. Callers hold r.mu.
func (a *lobbyAcc) add(r *Recorder) {
	for m, h := range r.lobby.hist {
		if h == nil {
			continue
		}
		if a.hist[m] == nil {
			a.hist[m] = reports.NewLatencyHistogram()
		}
		a.hist[m].Merge(h)
	}
	for sec, d := range r.lobby.players {
		if a.players == nil {
			a.players = map[int64][2]int64{}
		}
		v := a.players[sec]
		v[0] += d[0]
		v[1] += d[1]
		a.players[sec] = v
	}
	a.sent += r.lobby.sent
	a.received += r.lobby.received
}

// result stores the measures in run: Totals' bytes must already hold the
// steps' sum.
func (a *lobbyAcc) result(run *reports.Run) error {
	var err error
	if run.TimeToGame, err = reports.NewMeasure(a.hist[TimeToGame]); err != nil {
		return err
	}
	if run.RoomFill, err = reports.NewMeasure(a.hist[RoomFill]); err != nil {
		return err
	}
	run.Totals.DataSent += a.sent
	run.Totals.DataReceived += a.received
	run.Players = playersSeries(a.players)
	return nil
}

// playersSeries turns per-second changes into the dense level series of
// reports.PlayersPoint: nil when nothing changed.
func playersSeries(deltas map[int64][2]int64) []reports.PlayersPoint {
	if len(deltas) == 0 {
		return nil
	}
	secs := make([]int64, 0, len(deltas))
	for s := range deltas {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	last := secs[len(secs)-1]
	out := make([]reports.PlayersPoint, last+1)
	var room, game int64
	for sec := int64(0); sec <= last; sec++ {
		d := deltas[sec]
		room += d[0]
		game += d[1]
		out[sec] = reports.PlayersPoint{Second: sec, InRoom: room, InGame: game}
	}
	return out
}
