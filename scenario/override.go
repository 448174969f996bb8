package scenario

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/target"
)

// Overrides are command-line changes applied to a loaded Plan. Zero fields
// leave the plan alone.
type Overrides struct {
	Target   string        // --target host:port
	Duration time.Duration // --duration: cut the stages or hold the last target longer
	Rate     RateOverride  // --rate 2x | --rate 800/s (open model)
	Clients  int           // --clients N: closed model: scale so the peak is N; open model: max_clients
	Seed     *int64        // --seed
	// NoDefaultGate: --no-default-gate, the run's default error gate off
	// (as the scenario's default_error_gate: false).
	NoDefaultGate bool
	// Flows is --flows: how clients meet the network ("": the
	// scenario's flows_mode).
	Flows FlowsMode
	// Protocol are the protocols' own flags (ProtocolSpec.Flags, e.g.
	// udp-lobby's --instance-ports); nil: none given.
	Protocol *ProtocolFlags
}

// ProtocolFlags are the flags of `run` that the protocols declare
// (ProtocolSpec.Flags), each overriding one of its protocol's keys.
type ProtocolFlags struct {
	fs    *flag.FlagSet
	names map[string][]ProtocolName // flag name → the protocols declaring it
	apply map[ProtocolName]func(Options) (Options, error)
	own   map[ProtocolName][]string // protocol → its flag names
}

// AddProtocolFlags declares every registered protocol's flags on fs. A
// flag two protocols declare is declared once, by the first (in protocol
// order), and applies to both.
func AddProtocolFlags(fs *flag.FlagSet) *ProtocolFlags {
	pf := &ProtocolFlags{fs: fs, names: map[string][]ProtocolName{}, apply: map[ProtocolName]func(Options) (Options, error){},
		own: map[ProtocolName][]string{}}
	for _, p := range Protocols() {
		s := p.spec()
		if s.Flags == nil {
			continue
		}
		before := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
		pf.apply[p] = s.Flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !before[f.Name] {
				pf.names[f.Name] = append(pf.names[f.Name], p)
				pf.own[p] = append(pf.own[p], f.Name)
			}
		})
	}
	return pf
}

// Names returns the names of the protocols' flags, sorted.
func (pf *ProtocolFlags) Names() []string {
	if pf == nil {
		return nil
	}
	var out []string
	for n := range pf.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// applyTo applies the protocols' flags that were given to q: a flag of
// another protocol than q's is an error.
func (pf *ProtocolFlags) applyTo(q *Plan) error {
	if pf == nil {
		return nil
	}
	given := false
	var err error
	pf.fs.Visit(func(f *flag.Flag) {
		owners, ok := pf.names[f.Name]
		if !ok || err != nil {
			return
		}
		if !slices.Contains(owners, q.Protocol) {
			var names []string
			for _, o := range owners {
				names = append(names, string(o))
			}
			err = fmt.Errorf("--%s applies to %s only, not %s", f.Name, orList(names), q.Protocol)
			return
		}
		given = true
	})
	if err != nil || !given || pf.apply[q.Protocol] == nil {
		return err
	}
	q.Options, err = pf.apply[q.Protocol](q.Options)
	return err
}

// RateOverride is a parsed --rate value: either a Scale factor ("2x",
// "0.5x") or an Absolute peak in sessions per second ("800/s"). The shape
// of the stages is kept in both cases.
type RateOverride struct {
	Scale    float64
	Absolute float64
}

// IsZero reports whether no --rate was given.
func (r RateOverride) IsZero() bool { return r.Scale == 0 && r.Absolute == 0 }

// ParseRateOverride parses "2x", "0.5x" or "800/s".
func ParseRateOverride(s string) (RateOverride, error) {
	s = strings.TrimSpace(s)
	if x, ok := strings.CutSuffix(s, "x"); ok {
		f, err := strconv.ParseFloat(x, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return RateOverride{}, fmt.Errorf("--rate %q: a scale must be a positive number followed by x, e.g. 2x", s)
		}
		return RateOverride{Scale: f}, nil
	}
	r, err := ParseRate(s)
	if err != nil {
		return RateOverride{}, fmt.Errorf("--rate: %v (or a scale like 2x)", err)
	}
	if r <= 0 {
		return RateOverride{}, fmt.Errorf("--rate %q must be above 0", s)
	}
	return RateOverride{Absolute: r}, nil
}

// String renders the override as the flag would take it.
func (r RateOverride) String() string {
	if r.Scale != 0 {
		return strconv.FormatFloat(r.Scale, 'g', -1, 64) + "x"
	}
	if r.Absolute != 0 {
		return FormatRate(r.Absolute)
	}
	return ""
}

// Set implements flag.Value.
func (r *RateOverride) Set(s string) error {
	v, err := ParseRateOverride(s)
	if err == nil {
		*r = v
	}
	return err
}

// applyFlowsAndDuration applies --flows and --duration to q.
func (o Overrides) applyFlowsAndDuration(q *Plan) error {
	if o.Flows != "" {
		if err := q.Protocol.checkFlowsMode(o.Flows); err != nil {
			return fmt.Errorf("--flows %s: %v", o.Flows, err)
		}
		q.FlowsMode = o.Flows
	}
	if o.Duration == 0 {
		return nil
	}
	if o.Duration < 0 || o.Duration > maxDuration {
		return fmt.Errorf("--duration %s is outside (0, %s]", o.Duration, maxDuration)
	}
	q.Load.Duration = o.Duration
	for _, f := range q.Faults {
		if f.At >= o.Duration {
			return fmt.Errorf("--duration %s ends the run before the scenario's fault %s", o.Duration, f)
		}
	}
	return nil
}

// Apply changes the plan in place. It returns an error (and changes
// nothing) when an override does not fit the plan.
func (p *Plan) Apply(o Overrides) error {
	q := *p
	q.Load.Stages = append([]Stage(nil), p.Load.Stages...)
	q.NoDefaultGate = q.NoDefaultGate || o.NoDefaultGate
	if o.Target != "" {
		if err := target.Check(o.Target); err != nil {
			return fmt.Errorf("--target: %v", err)
		}
		q.Target = o.Target
	}
	if err := o.Protocol.applyTo(&q); err != nil {
		return err
	}
	if err := o.applyFlowsAndDuration(&q); err != nil {
		return err
	}
	peak := q.Load.Start
	for _, s := range q.Load.Stages {
		peak = math.Max(peak, s.Target)
	}
	scale := func(f float64) {
		q.Load.Start *= f
		for i := range q.Load.Stages {
			q.Load.Stages[i].Target *= f
		}
	}
	if !o.Rate.IsZero() {
		if q.Load.Model != Open {
			return fmt.Errorf("--rate applies to an open-model scenario; %s is closed (use --clients)", q.Name)
		}
		f := o.Rate.Scale
		if o.Rate.Absolute != 0 {
			if peak == 0 {
				return fmt.Errorf("--rate %s: the scenario's rate is 0 everywhere, nothing to scale", o.Rate)
			}
			f = o.Rate.Absolute / peak
		}
		if peak*f > 1_000_000 {
			return fmt.Errorf("--rate %s: peak would be %s, over 1000000/s", o.Rate, FormatRate(peak*f))
		}
		scale(f)
	}
	if o.Clients != 0 {
		if o.Clients < 0 || o.Clients > 1_000_000 {
			return fmt.Errorf("--clients %d is outside 1-1000000", o.Clients)
		}
		if q.Load.Model == Closed {
			if peak == 0 {
				return fmt.Errorf("--clients %d: the scenario has 0 clients everywhere, nothing to scale", o.Clients)
			}
			f := float64(o.Clients) / peak
			scale(f)
			q.Load.Start = math.Round(q.Load.Start)
			for i := range q.Load.Stages {
				q.Load.Stages[i].Target = math.Round(q.Load.Stages[i].Target)
			}
		}
		q.Load.MaxClients = o.Clients
	}
	if o.Seed != nil {
		if p.Impairment.Seed == p.Seed {
			q.Impairment.Seed = *o.Seed
		}
		q.Seed = *o.Seed
	}
	*p = q
	return nil
}
