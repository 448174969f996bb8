package scenario

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lobbybench/lobbybench/internal/words"
)

// Describe writes a human summary of the plan, for `lobbybench run
// --dry-run`: what would be sent, to whom, how fast, and what must hold.
func (p *Plan) Describe(w io.Writer) error {
	var out bytes.Buffer
	tw := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario %s (%s)\n", p.Name, p.File)
	if p.Description != "" {
		fmt.Fprintf(tw, "  %s\n", p.Description)
	}
	target := p.Target
	if target == "" {
		target = "embedded reference server (free loopback ports)"
	}
	fmt.Fprintf(tw, "  target\t%s\n", target)
	if p.TargetCmd != "" {
		fmt.Fprintf(tw, "  started by\t%s\n", p.TargetCmd)
	}
	for _, f := range p.Faults {
		fmt.Fprintf(tw, "  fault\t%s\n", f)
	}
	proto := string(p.Protocol)
	if p.Options != nil {
		proto += p.Options.Describe()
	}
	fmt.Fprintf(tw, "  protocol\t%s\n", proto)
	if p.OnViolation != "" {
		fmt.Fprintf(tw, "  on violation\t%s\n", p.OnViolation)
	}
	fmt.Fprintf(tw, "  load\t%s\n", p.Load.describe())
	fmt.Fprintf(tw, "  requests\ttimeout %s, %d retries %s apart\n", p.Defaults.Timeout, p.Defaults.Retries, p.Defaults.RetryInterval)
	fmt.Fprintf(tw, "  seed\t%d\n", p.Seed)
	if !p.Impairment.IsZero() {
		fmt.Fprintf(tw, "  impairment\tout %s; in %s; seed %d\n", p.Impairment.Out.describe(), p.Impairment.In.describe(), p.Impairment.Seed)
	}
	if len(p.SourceAddrs) > 0 {
		fmt.Fprintf(tw, "  sources\t%d addresses, %s-%s\n", len(p.SourceAddrs), p.SourceAddrs[0], p.SourceAddrs[len(p.SourceAddrs)-1])
	}
	if p.SocketBuffer > 0 {
		fmt.Fprintf(tw, "  socket buffer\t%s\n", formatSize(p.SocketBuffer))
	}
	total := 0.0
	for _, f := range p.Flows {
		total += f.Weight
	}
	tw.Flush()
	for _, f := range p.Flows {
		tw = tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
		group := ""
		if f.GroupSize > 1 {
			group = fmt.Sprintf(", groups of %d", f.GroupSize)
		}
		fmt.Fprintf(tw, "  flow %s: weight %s (%.0f%%)%s\n", f.Name, strconv.FormatFloat(f.Weight, 'g', -1, 64), 100*f.Weight/total, group)
		for i, s := range f.Steps {
			who := ""
			if s.Only != All {
				who = string(s.Only) + " only"
			}
			fmt.Fprintf(tw, "    %d\t%s\t%s\t%s\n", i+1, s.Label, s.describe(), who)
		}
		tw.Flush()
	}
	if len(p.Thresholds) > 0 {
		fmt.Fprintf(&out, "  thresholds\n")
		for _, t := range p.Thresholds {
			fmt.Fprintf(&out, "    %s\n", t.Source)
		}
	}
	lines := strings.SplitAfter(out.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \n")
	}
	_, err := io.WriteString(w, words.FoldColumns(strings.Join(lines[:len(lines)-1], "\n")+"\n", words.TermWidth))
	return err
}

func (l LoadShape) describe() string {
	unit := func(v float64) string {
		if l.Model == Open {
			return FormatRate(v)
		}
		return fmt.Sprintf("%.0f clients", v)
	}
	var parts []string
	prev := l.Start
	if c := l.Curve; c != nil {
		lo, hi := l.Start, l.Start
		for _, s := range l.Stages {
			lo, hi = math.Min(lo, s.Target), math.Max(hi, s.Target)
		}
		parts = append(parts, fmt.Sprintf("curve %s (%s): %d points over %s compressed %g×, %s to %s",
			c.Path, c.Column, c.Points, formatSpan(c.Span), c.Compress, unit(lo), unit(hi)))
	} else if len(l.Stages) == 0 {
		parts = append(parts, unit(l.Start))
	}
	for _, s := range l.Stages {
		if l.Curve != nil {
			break
		}
		switch {
		case s.For == 0:
			parts = append(parts, "jump to "+unit(s.Target))
		case s.Target == prev:
			parts = append(parts, fmt.Sprintf("%s for %s", unit(s.Target), s.For))
		default:
			parts = append(parts, fmt.Sprintf("%s→%s over %s", unit(prev), unit(s.Target), s.For))
		}
		prev = s.Target
	}
	out := fmt.Sprintf("%s: %s; %s in all; at most %d clients", l.Model, strings.Join(parts, ", "), l.Duration, l.MaxClients)
	if l.Model == Open {
		out += fmt.Sprintf("; %.0f sessions", l.Ramp().Total())
		if l.Arrivals == ArrivalsPoisson {
			out += " expected, Poisson arrivals"
		}
	}
	return out
}

func (i Impair) describe() string {
	if i.IsZero() {
		return "none"
	}
	return fmt.Sprintf("drop %g%% dup %g%% reorder %g%% delay %s±%s", 100*i.Drop, 100*i.Duplicate, 100*i.Reorder, i.Delay, i.Jitter)
}

func (s Step) describe() string {
	switch s.Kind {
	case Think:
		switch s.Think.Dist {
		case Uniform:
			return fmt.Sprintf("uniform %s-%s", s.Think.A, s.Think.B)
		case Exponential:
			return fmt.Sprintf("exponential, mean %s", s.Think.A)
		case Normal:
			return fmt.Sprintf("normal %s±%s", s.Think.A, s.Think.B)
		}
		return s.Think.A.String()
	case Barrier:
		return fmt.Sprintf("%d of the group, timeout %s", s.BarrierN, s.Policy.Timeout)
	case Malformed:
		kinds := make([]string, len(s.Malformed.Kinds))
		for i, k := range s.Malformed.Kinds {
			kinds[i] = string(k)
		}
		return fmt.Sprintf("%d to %s, %g%% malformed (%s), silence %s", s.Malformed.Count, s.Malformed.To, 100*s.Malformed.Share, strings.Join(kinds, ","), s.Malformed.Silence)
	case RateProbe:
		req := string(s.Probe.Request)
		if s.Probe.Script != nil {
			req = s.Probe.Script.Send.Message.S
		}
		return fmt.Sprintf("%s %s→%s over %s, limit at %g%% loss", req, FormatRate(s.Probe.From), FormatRate(s.Probe.To), s.Probe.Over, 100*s.Probe.Loss)
	}
	return s.describeOwn()
}

func formatSize(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return fmt.Sprintf("%d%s", n/u.m, u.s)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
