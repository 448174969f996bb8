package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a non-negative duration with a unit ("10s", "250ms",
// "1m30s"). A bare number other than 0 is an error: "10" is ambiguous.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty duration (want e.g. 10s, 250ms)")
	}
	if s == "0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("duration %q has no unit (want e.g. %ss or %sms)", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 10s, 250ms, 1m30s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return d, nil
}

// ParseRate parses a rate "N/unit" into events per second: "500/s",
// "30/m", "10/100ms", "2.5/1s". The rate must be finite and non-negative.
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, per, ok := strings.Cut(s, "/")
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return 0, fmt.Errorf("rate %q has no period (want e.g. %s/s)", s, s)
		}
		return 0, fmt.Errorf("invalid rate %q (want e.g. 500/s, 30/m, 10/100ms)", s)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("invalid rate %q: %q is not a number", s, num)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative rate %q", s)
	}
	per = strings.TrimSpace(per)
	if per != "" && (per[0] < '0' || per[0] > '9') && per[0] != '.' {
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid rate %q: period %q is not a positive duration (want s, m, 100ms…)", s, per)
	}
	return n / d.Seconds(), nil
}

// FormatRate renders events per second as "N/s".
func FormatRate(perSec float64) string {
	return strconv.FormatFloat(perSec, 'g', -1, 64) + "/s"
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
	{"B", 1},
}

// ParseSize parses a byte size: "4MiB", "512KiB", "1MB" (decimal), "4096"
// (bytes). K, M and G alone are binary (as in socket-buffer habits).
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	num := s
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid size %q (want e.g. 4MiB, 256KiB, 65536)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("negative size %q", s)
	}
	v := f * float64(mult)
	if v > 1<<40 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(v), nil
}

// ParsePercent parses "1%", "0.5%" or "0" into a fraction in [0,1].
func ParsePercent(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return 0, fmt.Errorf("percentage %q has no %% sign (want e.g. %s%%)", s, s)
		}
		return 0, fmt.Errorf("invalid percentage %q (want e.g. 1%%, 0.5%%)", s)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("invalid percentage %q (want e.g. 1%%, 0.5%%)", s)
	}
	if f < 0 || f > 100 {
		return 0, fmt.Errorf("percentage %q is outside 0%%-100%%", s)
	}
	return f / 100, nil
}
