package metrics

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lobbybench/lobbybench/result"
)

// Measure names one of the lobby's own duration measures
// (result.MeasureTimeToGame, result.MeasureRoomFill).
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
	// players holds, per second, the players who entered a room, the
	// net change of those in a room, and the same for games
	// (Recorder.Players): summed over recorders, they give each second's
	// players (playersSeries).
	players map[int64]*[4]int64
	// bytes no step owns (sent before a session's first step ended).
	sent, received int64
}

// Measure records one sample d of measure m (one per session for
// TimeToGame, one per room for RoomFill), clamped to [0,
// result.HighestUS] µs. It allocates only the first time m is recorded.
func (r *Recorder) Measure(m Measure, d time.Duration) {
	if m >= numMeasures {
		return
	}
	us := min(toUS(d), result.HighestUS)
	r.mu.Lock()
	h := r.lobby.hist[m]
	if h == nil {
		h = result.NewLatencyHistogram()
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
		r.lobby.players = map[int64]*[4]int64{}
	}
	d := r.lobby.players[sec]
	if d == nil {
		d = new([4]int64)
		r.lobby.players[sec] = d
	}
	d[0] += max(room, 0)
	d[1] += room
	d[2] += max(game, 0)
	d[3] += game
	r.mu.Unlock()
	r.live.inRoom.Add(room)
	r.live.inGame.Add(game)
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
	r.live.dataSent.Add(sent)
	r.live.dataReceived.Add(received)
}

// lobbyAcc sums the lobby measures of every recorder for Snapshot.
type lobbyAcc struct {
	hist           [numMeasures]*hdrhistogram.Histogram
	players        map[int64][4]int64
	sent, received int64
}

// add takes r's lobby measures. Callers hold r.mu.
func (a *lobbyAcc) add(r *Recorder) {
	for m, h := range r.lobby.hist {
		if h == nil {
			continue
		}
		if a.hist[m] == nil {
			a.hist[m] = result.NewLatencyHistogram()
		}
		a.hist[m].Merge(h)
	}
	for sec, d := range r.lobby.players {
		if a.players == nil {
			a.players = map[int64][4]int64{}
		}
		v := a.players[sec]
		for i := range v {
			v[i] += d[i]
		}
		a.players[sec] = v
	}
	a.sent += r.lobby.sent
	a.received += r.lobby.received
}

// result stores the measures in run: Totals' bytes must already hold the
// steps' sum.
func (a *lobbyAcc) result(run *result.Run) error {
	var err error
	if run.TimeToGame, err = result.NewMeasure(a.hist[TimeToGame]); err != nil {
		return err
	}
	if run.RoomFill, err = result.NewMeasure(a.hist[RoomFill]); err != nil {
		return err
	}
	run.Totals.DataSent += a.sent
	run.Totals.DataReceived += a.received
	run.Players = playersSeries(a.players)
	return nil
}

// playersSeries turns per-second entries and net changes into the dense
// series of result.PlayersPoint: each second counts the players there
// when it began plus those who entered during it, through the second after
// the last change (which holds the level the run ended with). nil when
// nothing changed.
func playersSeries(deltas map[int64][4]int64) []result.PlayersPoint {
	if len(deltas) == 0 {
		return nil
	}
	last := int64(0)
	for s := range deltas {
		last = max(last, s)
	}
	out := make([]result.PlayersPoint, last+2)
	var room, game int64 // the level at the start of the second
	for sec := int64(0); sec <= last+1; sec++ {
		d := deltas[sec]
		out[sec] = result.PlayersPoint{Second: sec, InRoom: room + d[0], InGame: game + d[2]}
		room += d[1]
		game += d[3]
	}
	return out
}
