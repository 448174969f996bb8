package simclient

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

type reuseFake struct {
	fit, closed bool
	reusedAs    int
}

func (r *reuseFake) Run(context.Context, time.Time) error { return nil }
func (r *reuseFake) Close() error                         { r.closed = true; return nil }

type reusableFake struct{ reuseFake }

func (r *reusableFake) Reuse(id int, _ *scenario.Flow) (Session, bool) {
	if !r.fit {
		return nil, false
	}
	return &reusableFake{reuseFake{fit: true, reusedAs: id}}, true
}

func TestRenew(t *testing.T) {
	made := 0
	f := func(*Shared, int, *scenario.Flow, netip.Addr) (Session, error) { made++; return &reuseFake{}, nil }
	tests := []struct {
		name         string
		prev         interface{ Session }
		wantReused   bool
		wantPrevShut bool
	}{
		{"no previous session", nil, false, false},
		{"reusable and fit", &reusableFake{reuseFake{fit: true}}, true, false},
		{"reusable, not fit", &reusableFake{}, false, true},
		{"not reusable", &reuseFake{}, false, true},
	}
	for _, tc := range tests {
		made = 0
		var prev Session
		if tc.prev != nil {
			prev = tc.prev
		}
		s, err := Renew(f, nil, prev, 7, nil, netip.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		r, reused := s.(*reusableFake)
		if reused != tc.wantReused || reused && r.reusedAs != 7 || (made == 1) == tc.wantReused {
			t.Errorf("%s: got %T (made %d), want reused %v", tc.name, s, made, tc.wantReused)
		}
		shut := false
		switch p := tc.prev.(type) {
		case *reusableFake:
			shut = p.closed
		case *reuseFake:
			shut = p.closed
		}
		if shut != tc.wantPrevShut {
			t.Errorf("%s: previous closed %v, want %v", tc.name, shut, tc.wantPrevShut)
		}
	}
}
