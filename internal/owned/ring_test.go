package owned

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRing(t *testing.T) {
	long := strings.Repeat("x", maxLineBytes+10)
	tests := []struct {
		name   string
		n      int
		writes []string
		want   []string
		inUse  bool
	}{
		{"lines", 5, []string{"a\nb\n", "c\n"}, []string{"a", "b", "c"}, false},
		{"keeps the last n", 2, []string{"a\nb\nc\nd\n"}, []string{"c", "d"}, false},
		{"line split over writes", 3, []string{"hel", "lo\r\nwor", "ld"}, []string{"hello", "world"}, false},
		{"over-long line is cut", 3, []string{long + "\nnext\n"}, []string{long[:maxLineBytes] + cutMark, "next"}, false},
		{"over-long line over writes", 3, []string{long[:maxLineBytes-1], "yy", "zz\nok\n"}, []string{long[:maxLineBytes-1] + "y" + cutMark, "ok"}, false},
		{"address in use", 1, []string{"listen tcp :9000: bind: Address already in use\nretrying\n"}, []string{"retrying"}, true},
		{"empty lines kept", 3, []string{"\n\nx"}, []string{"", "", "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tee bytes.Buffer
			r := newRing(tt.n, &tee, nil)
			for _, w := range tt.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			r.flush()
			if got := r.tail(); !slices.Equal(got, tt.want) {
				t.Errorf("tail = %q, want %q", got, tt.want)
			}
			if r.sawInUse() != tt.inUse {
				t.Errorf("sawInUse = %v", r.sawInUse())
			}
			if tee.String() != strings.Join(tt.writes, "") {
				t.Errorf("tee got %q", tee.String())
			}
		})
	}
}

// TestAccount feeds readings of two processes: the second starts its CPU
// time from 0 and the total is the sum of both.
func TestAccount(t *testing.T) {
	epoch := time.Unix(1000, 0)
	at := func(s int) time.Time { return epoch.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name      string
		run       func(a *account)
		cpu       time.Duration
		peak      int64
		restarted []bool
		exits     []string
	}{
		{"one process", func(a *account) {
			a.started(0, 10)
			a.sample(0, reading{user: time.Second, system: time.Second, rss: 100}, at(1))
			a.sample(0, reading{user: 3 * time.Second, system: time.Second, rss: 50}, at(2))
		}, 4 * time.Second, 100, []bool{false, false}, nil},
		{"restart starts from 0", func(a *account) {
			a.started(0, 10)
			a.sample(0, reading{user: 2 * time.Second, rss: 100}, at(1))
			a.exited(0, "killed by SIGKILL", 2500*time.Millisecond) // the kernel's exact figure
			a.started(1, 11)
			a.sample(1, reading{user: time.Second, rss: 300}, at(3))
			a.sample(1, reading{user: 1500 * time.Millisecond, rss: 200}, at(4))
		}, 4 * time.Second, 300, []bool{false, true, false}, []string{"killed by SIGKILL"}},
		{"late reading of an old process", func(a *account) {
			a.started(0, 10)
			a.started(1, 11)
			a.sample(1, reading{user: time.Second}, at(1))
			a.sample(0, reading{user: time.Second}, at(1))
		}, 2 * time.Second, 0, []bool{true, false}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAccount("srv", epoch)
			tt.run(a)
			s := a.snapshot()
			if s.CPUNS != tt.cpu || s.PeakRSSBytes != tt.peak || !slices.Equal(s.Exits, tt.exits) {
				t.Errorf("CPU %v peak %d exits %q; want %v %d %q", s.CPUNS, s.PeakRSSBytes, s.Exits, tt.cpu, tt.peak, tt.exits)
			}
			var restarted []bool
			for _, x := range s.Samples {
				restarted = append(restarted, x.Restarted)
			}
			if !slices.Equal(restarted, tt.restarted) {
				t.Errorf("restarted flags %v, want %v", restarted, tt.restarted)
			}
		})
	}
}

// TestAccountThins checks the samples stay bounded over a long run and
// keep its whole span and its restart.
func TestAccountThins(t *testing.T) {
	epoch := time.Unix(0, 0)
	a := newAccount("srv", epoch)
	a.started(0, 1)
	const n = 3 * maxSamples
	for i := range n {
		if i == n/2 {
			a.started(1, 2)
		}
		pid := 0
		if i >= n/2 {
			pid = 1
		}
		a.sample(pid, reading{user: time.Duration(i), rss: int64(i)}, epoch.Add(time.Duration(i)*time.Second))
	}
	s := a.snapshot()
	if len(s.Samples) >= maxSamples || len(s.Samples) < maxSamples/4 {
		t.Fatalf("%d samples kept", len(s.Samples))
	}
	if s.Samples[0].OffsetNS != 0 || s.Samples[len(s.Samples)-1].OffsetNS < time.Duration(n-8)*time.Second {
		t.Errorf("span %v…%v", s.Samples[0].OffsetNS, s.Samples[len(s.Samples)-1].OffsetNS)
	}
	if s.PeakRSSBytes != n-1 {
		t.Errorf("peak %d", s.PeakRSSBytes)
	}
	if !slices.ContainsFunc(s.Samples, func(x Sample) bool { return x.Restarted && x.OffsetNS == time.Duration(n/2)*time.Second }) {
		t.Error("the restart's first sample was dropped")
	}
}
