package words

import (
	"fmt"
	"strconv"
	"time"
)

// US says a latency in microseconds: "850µs", "12.35ms", "1.50s".
func US(us int64) string {
	switch {
	case us < 1000:
		return strconv.FormatInt(us, 10) + "µs"
	case us < 1_000_000:
		return strconv.FormatFloat(float64(us)/1e3, 'f', 2, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(us)/1e6, 'f', 2, 64) + "s"
	}
}

// CPU says a CPU time in the latency tables' units: "850µs", "12.35ms",
// "1.50s".
func CPU(d time.Duration) string { return US(d.Microseconds()) }

// Seconds says a time to a tenth of a second: "1.2 s".
func Seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// Pct says a ratio in percent to two decimals: 0.0125 is "1.25%".
func Pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 2, 64) + "%" }

// Signed says a change to two decimals with its sign and unit: "+12.50%",
// "-3.00%".
func Signed(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', 2, 64) + unit
	if v > 0 {
		s = "+" + s
	}
	return s
}

// Float says a plain figure to six significant digits.
func Float(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Bytes says a byte count: "512 B", "12.3 KiB", "4.0 MiB".
func Bytes(n int64) string {
	const k = 1024
	if n < k {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, unit := float64(n)/k, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < k {
			break
		}
		v, unit = v/k, u
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
}

// MiB says bytes as MiB to one decimal: "12.0 MiB".
func MiB(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// JoinMax joins the first n items with "; " and counts the rest: "a; b;
// and 3 more".
func JoinMax(items []string, n int) string {
	s := ""
	for i, it := range items[:min(len(items), n)] {
		if i > 0 {
			s += "; "
		}
		s += it
	}
	if len(items) > n {
		s += fmt.Sprintf("; and %d more", len(items)-n)
	}
	return s
}

// OrDash is s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Duration says a short duration, such as a recovery time: in
// milliseconds below a second ("400 ms"; a restart can take a few), else
// in tenths of a second ("2.5 s").
func Duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return Seconds(d)
}
