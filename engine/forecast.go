package engine

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lobbybench/lobbybench/internal/words"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// sessionFloor is the least a session is taken to last in the forecast's
// rates: its round trips, when it has no pause of its own.
const sessionFloor = time.Millisecond

// Forecast is what a run of a plan will do, worked out from the plan alone
// without sending anything (`lobbybench describe`): the schedule's
// arrivals, the clients, sockets and open files it needs at its peak and
// the rooms it holds against the server's limit.
type Forecast struct {
	Model    scenario.LoadModel
	Duration time.Duration
	// Sessions is how many sessions the run starts: the open model's
	// schedule (expected, with Poisson arrivals); the closed model's
	// client-seconds over the session waits (0 when a session has none).
	Sessions float64
	Poisson  bool
	// Peak is the schedule's peak: sessions/s (open), clients (closed).
	Peak float64
	// Waits is an arrival's mean session waits (scenario.Plan.Mix).
	Waits time.Duration
	// PeakClients is the clients alive at once at the peak: the closed
	// model's target; the open model's peak rate × session waits (Little's
	// law), at most MaxClients.
	PeakClients int
	MaxClients  int
	// Flows is the plan's flows mode as given (auto not yet settled).
	Flows scenario.FlowsMode
	// Files is the open files the run needs (EstimateFiles).
	Files Files
	// Rooms is nil when no flow creates rooms.
	Rooms *RoomForecast
}

// RoomForecast sets the rooms a run creates against a server's limit.
type RoomForecast struct {
	PerSecond float64 // created per second at the peak
	Live      int     // held at once at the peak: in use, or emptied and not yet freed
	Limit     refserver.RoomLimit
	// Embedded: Limit is the embedded server's; otherwise it is the
	// reference server's defaults (a target's limit is unknown).
	Embedded bool
}

// Over reports whether the rooms held at the peak exceed the limit.
func (r RoomForecast) Over() bool { return r.Limit.Max > 0 && r.Live > r.Limit.Max }

// NewForecast works out plan's forecast: against its embedded server when
// it names no target.
func NewForecast(plan *scenario.Plan) (Forecast, error) {
	l := plan.Load
	waits, rooms := plan.Mix()
	session := max(waits, sessionFloor)
	f := Forecast{Model: l.Model, Duration: l.Duration, Poisson: l.Arrivals == scenario.ArrivalsPoisson,
		Waits: waits, MaxClients: l.MaxClients, Flows: plan.FlowsMode}
	total := l.Ramp().Total()
	for _, p := range append([]float64{l.Start}, stageTargets(l.Stages)...) {
		f.Peak = max(f.Peak, p)
	}
	if l.Model == scenario.Open {
		f.Sessions = total
		f.PeakClients = min(int(math.Ceil(f.Peak*session.Seconds())), l.MaxClients)
	} else {
		f.PeakClients = min(int(f.Peak), l.MaxClients)
		if waits > 0 {
			f.Sessions = total / waits.Seconds()
		}
	}
	var srv *refserver.Config
	limits := refserver.DefaultConfig()
	if plan.Target == "" {
		c, err := EmbeddedConfig(plan)
		if err != nil {
			return Forecast{}, err
		}
		srv, limits = &c, c
	}
	f.Files = EstimateFiles(plan, Shard{}, srv)
	if rooms > 0 {
		r := &RoomForecast{Embedded: srv != nil}
		r.Limit, _ = limits.Rooms(string(plan.Protocol))
		r.PerSecond = float64(f.PeakClients) * rooms / session.Seconds()
		if l.Model == scenario.Open {
			r.PerSecond = f.Peak * rooms
		}
		r.Live = int(math.Ceil(r.PerSecond * (session + r.Limit.Kept).Seconds()))
		f.Rooms = r
	}
	return f, nil
}

func stageTargets(st []scenario.Stage) []float64 {
	out := make([]float64, len(st))
	for i, s := range st {
		out[i] = s.Target
	}
	return out
}

// Write renders the forecast as the indented lines `describe` prints after
// the plan.
func (f Forecast) Write(w io.Writer) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "forecast (worked out from the scenario; nothing is sent)\n")
	fmt.Fprintf(tw, "  duration\t%s\n", f.Duration)
	fmt.Fprintf(tw, "  sessions\t%s\n", f.sessions())
	fmt.Fprintf(tw, "  session waits\t%s on average (thinks, ping and echo gaps; round trips and waits for the server come on top)\n", round(f.Waits))
	fmt.Fprintf(tw, "  peak clients\t%s\n", f.clients())
	fmt.Fprintf(tw, "  sockets\t%s\n", f.sockets())
	fmt.Fprintf(tw, "  open files\t%s\n", f.files())
	if r := f.Rooms; r != nil {
		fmt.Fprintf(tw, "  rooms\t%s\n", r.String())
	}
	tw.Flush()
	_, err := io.WriteString(w, words.FoldColumns(b.String(), words.TermWidth))
	return err
}

func (f Forecast) sessions() string {
	if f.Model == scenario.Open {
		s := fmt.Sprintf("%.0f (open model, %s arrivals), peak %s", f.Sessions, map[bool]string{false: "uniform", true: "Poisson"}[f.Poisson], scenario.FormatRate(f.Peak))
		if f.Poisson {
			s = "about " + s
		}
		return s
	}
	if f.Sessions == 0 {
		return fmt.Sprintf("as many as the server answers (closed model, %.0f clients at the peak, no pauses)", f.Peak)
	}
	return fmt.Sprintf("about %.0f (closed model: clients × time / session waits; fewer as round trips add), %.0f clients at the peak", f.Sessions, f.Peak)
}

func (f Forecast) clients() string {
	if f.Model == scenario.Closed {
		return fmt.Sprintf("%d (the schedule's peak; max_clients %d)", f.PeakClients, f.MaxClients)
	}
	s := fmt.Sprintf("about %d at once (peak rate × session waits), at most %d (max_clients)", f.PeakClients, f.MaxClients)
	if f.PeakClients >= f.MaxClients {
		s += ": arrivals beyond it count as dropped_starts"
	}
	return s
}

// sockets says what the clients hold of the network: a socket each, or
// on virtual flows a row of a table each.
func (f Forecast) sockets() string {
	switch {
	case f.Files.VirtualClients > 0:
		return fmt.Sprintf("none per client: virtual flows (a table row each; %d descriptors for all of them)", f.Files.Flows)
	case f.Flows == scenario.FlowsAuto:
		return fmt.Sprintf("one per client, at most %d, unless the run gets virtual flows (auto: where the machine allows them; then none)", f.MaxClients)
	}
	return fmt.Sprintf("one per client: at most %d", f.MaxClients)
}

func (f Forecast) files() string {
	s := fmt.Sprintf("about %d (%s)", f.Files.Needed(), f.Files.parts())
	switch {
	case f.Files.Limit == 0:
		return s + "; the open-files limit is unknown here"
	case f.Files.Fits():
		return s + fmt.Sprintf(", within the open-files limit of %d", f.Files.Limit)
	}
	return s + fmt.Sprintf(", OVER the open-files limit of %d: raise it (ulimit -n) or split the run (--workers)", f.Files.Limit)
}

// String says how many rooms are created and held against the limit.
func (r RoomForecast) String() string {
	whose := "the embedded server's"
	if !r.Embedded {
		whose = "the target's limit is unknown; the reference server's default is"
	}
	kept := ""
	if r.Limit.Kept > 0 {
		kept = fmt.Sprintf(", then kept ~%s once empty", round(r.Limit.Kept))
	}
	s := fmt.Sprintf("%s/s created at the peak, about %d held at once (in use for the session%s); %s %d",
		trimFloat(r.PerSecond), r.Live, kept, whose, r.Limit.Max)
	if r.Over() {
		s += ": OVER it, later creates will be refused"
	}
	return s
}

func trimFloat(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// round keeps a duration readable: milliseconds.
func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
