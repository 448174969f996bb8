package conformance

import (
	"encoding/hex"
	"fmt"
	"io"
	"time"
)

// TextOptions shape WriteText.
type TextOptions struct {
	// Quiet prints only failures, warnings and the count line.
	Quiet bool
	// Verbose also prints the notes of passing cases.
	Verbose bool
	// MaxWireBytes bounds the hex shown per wire entry (0 means 128).
	MaxWireBytes int
	// MaxWireEntries bounds the wire entries shown per failure (0 means
	// 40); the JSON output keeps them all.
	MaxWireEntries int
}

// WriteText writes the terminal report: one line per case (✔ pass, ✘ fail,
// ! warn, i info, - skip) grouped by document section, with the
// requirement, Expected and Actual under each failure and warning, the hex
// wire log under each failure (Autobahn's wire log), and a final count
// line.
func WriteText(w io.Writer, r *Report, o TextOptions) error {
	ew := &errWriter{w: w}
	if !o.Quiet {
		fmt.Fprintf(ew, "lobbybench conform: %s %s", r.Protocol, r.Target)
		if r.Strict {
			fmt.Fprint(ew, " (strict)")
		}
		fmt.Fprintln(ew)
		for _, n := range r.Notes {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	section := ""
	for _, x := range r.Results {
		show := !o.Quiet || x.Verdict == FailVerdict || x.Verdict == Warn
		if !show {
			continue
		}
		if x.Case.Section != section {
			section = x.Case.Section
			fmt.Fprintf(ew, "\n%s\n", section)
		}
		fmt.Fprintf(ew, "  %s %-9s %s", x.Verdict.Symbol(), x.Case.ID, x.Case.Desc)
		if x.Verdict == Warn || x.Verdict == InfoVerdict || x.Verdict == Skip {
			fmt.Fprintf(ew, " [%s]", x.Verdict)
		}
		fmt.Fprintln(ew)
		switch x.Verdict {
		case FailVerdict, Warn:
			fmt.Fprintf(ew, "      requirement (%s): %s\n", x.Case.Level, x.Case.Requirement)
			if x.Case.Rule != "" {
				fmt.Fprintf(ew, "      rule:     %s\n", x.Case.Rule)
			}
			fmt.Fprintf(ew, "      expected: %s\n", x.Expected)
			fmt.Fprintf(ew, "      actual:   %s\n", x.Actual)
			for _, n := range x.Notes {
				fmt.Fprintf(ew, "      note:     %s\n", n)
			}
			if x.Verdict == FailVerdict {
				writeWireText(ew, x.Wire, x.WireElided, o.MaxWireBytes, o.MaxWireEntries)
			}
		case Skip:
			fmt.Fprintf(ew, "      skipped:  %s\n", x.Actual)
		case InfoVerdict:
			if x.Actual != "" {
				fmt.Fprintf(ew, "      %s\n", x.Actual)
			}
			for _, n := range x.Notes {
				fmt.Fprintf(ew, "      %s\n", n)
			}
		case Pass:
			if o.Verbose {
				for _, n := range x.Notes {
					fmt.Fprintf(ew, "      %s\n", n)
				}
			}
		}
	}
	fmt.Fprintf(ew, "\n%s\n", CountLine(r))
	return ew.err
}

// CountLine returns the final line: "41 cases in 4.2s: 35 passed, 1
// failed, 2 warnings, 1 info, 2 skipped".
func CountLine(r *Report) string {
	c := r.Counts()
	s := fmt.Sprintf("%d cases in %v: %d passed, %d failed, %d warnings, %d info, %d skipped",
		c.Total, r.Duration.Round(time.Millisecond), c.Pass, c.Fail, c.Warn, c.Info, c.Skip)
	if r.Strict && c.Warn > 0 {
		s += " (strict: warnings fail the run)"
	}
	return s
}

func writeWireText(w io.Writer, wire []WireEntry, elided, max, maxEntries int) {
	if len(wire) == 0 {
		return
	}
	if max <= 0 {
		max = 128
	}
	if maxEntries <= 0 {
		maxEntries = 40
	}
	if len(wire) > maxEntries {
		elided += len(wire) - maxEntries
		wire = wire[:maxEntries]
	}
	fmt.Fprintln(w, "      wire:")
	for _, e := range wire {
		from, to := e.Local, e.Peer
		if e.Dir == Received {
			from, to = e.Peer, e.Local
		}
		note := ""
		if e.Note != "" {
			note = "  " + e.Note
		}
		fmt.Fprintf(w, "        %s +%.3fms %s → %s (%d bytes)%s\n", e.Dir.Arrow(), float64(e.Offset)/float64(time.Millisecond), from, to, len(e.Data), note)
		d := e.Data
		cut := 0
		if len(d) > max {
			cut = len(d) - max
			d = d[:max]
		}
		for i := 0; i < len(d); i += 16 {
			j := i + 16
			if j > len(d) {
				j = len(d)
			}
			fmt.Fprintf(w, "          %04x  % x\n", i, d[i:j])
		}
		if cut > 0 {
			fmt.Fprintf(w, "          … %d more bytes\n", cut)
		}
	}
	if elided > 0 {
		fmt.Fprintf(w, "        … %d more entries (--json keeps up to %d per case)\n", elided, maxWireEntries)
	}
}

// hexString is the wire entry's bytes as lowercase hex without spaces.
func hexString(b []byte) string { return hex.EncodeToString(b) }

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
