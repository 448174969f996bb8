//go:build linux

package main

import (
	"testing"
	"time"
)

func TestParseSteal(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		ok         bool
	}{
		{"two CPUs", "cpu  3142476 963739 1125445 4654250 30303 0 107416 2348 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 23480 * time.Millisecond, true},
		{"older kernel, no guest fields", "cpu  1 2 3 4 5 6 7 42\n", 420 * time.Millisecond, true},
		{"no steal field", "cpu  1 2 3 4 5 6 7\n", 0, false},
		{"first line not the total", "cpu0 1 2 3 4 5 6 7 8 9\n", 0, false},
		{"not a number", "cpu  1 2 3 4 5 6 7 x 9\n", 0, false},
		{"negative", "cpu  1 2 3 4 5 6 7 -8 9\n", 0, false},
		{"empty", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseSteal(tc.stat)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("parseSteal(%q) = %v, %v; want %v, %v", tc.stat, got, ok, tc.want, tc.ok)
			}
		})
	}
}
