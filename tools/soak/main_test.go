package main

import (
	"strings"
	"testing"
	"time"
)

// series builds load samples every 10 s from f(i) (RSS in MiB, goroutines)
// and one drain sample at the end.
func series(n int, f func(i int) (rssMiB float64, gor int), end sample) []sample {
	var out []sample
	for i := range n {
		r, g := f(i)
		out = append(out, sample{at: time.Duration(i+1) * 10 * time.Second, load: true,
			serveRSS: int64(r * (1 << 20)), runRSS: int64(r * (1 << 20)), goroutines: g, rooms: 30, instances: 30})
	}
	end.at = time.Duration(n+1) * 10 * time.Second
	return append(out, end)
}

func TestJudge(t *testing.T) {
	drained := sample{goroutines: 12}
	for _, tc := range []struct {
		name    string
		samples []sample
		fail    []string // check names expected to fail
	}{
		{"flat after warm-up", series(30, func(i int) (float64, int) {
			if i < 6 {
				return 10 + float64(i)*2, 20 + 5*i // warm-up growth is not judged
			}
			return 22 + float64(i%3)*0.3, 50 + i%4
		}, drained), nil},
		{"RSS keeps growing", series(30, func(i int) (float64, int) { return 20 + float64(i)*0.5, 50 }, drained),
			[]string{"serve RSS flat", "run RSS flat"}},
		{"goroutines keep growing", series(30, func(i int) (float64, int) { return 20, 50 + 3*i }, drained),
			[]string{"serve goroutines"}},
		{"rooms left", series(30, func(int) (float64, int) { return 20, 50 }, sample{rooms: 2, instances: 2, goroutines: 14}),
			[]string{"back to zero"}},
		{"goroutines left", series(30, func(int) (float64, int) { return 20, 50 }, sample{goroutines: 40}),
			[]string{"goroutines back"}},
		{"too short", series(3, func(int) (float64, int) { return 20, 50 }, drained),
			[]string{"serve RSS flat", "serve goroutines", "run RSS flat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &verdict{}
			judge(v, tc.samples, 60*time.Second, 12)
			var failed []string
			for _, c := range v.checks {
				if !c.ok {
					failed = append(failed, c.name)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.fail, ",") {
				t.Fatalf("failed checks %v, want %v (%+v)", failed, tc.fail, v.checks)
			}
			if v.pass() != (len(tc.fail) == 0) {
				t.Fatalf("pass() = %v", v.pass())
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "10s"},
		{"--rate", "0"},
		{"--bin", "/nonexistent/lobbybench"},
		{"--nope"},
	} {
		var out, errs strings.Builder
		if code := run(args, &out, &errs); code != 2 || errs.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs.String())
		}
	}
}
