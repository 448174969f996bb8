package target

import (
	"context"
	"strings"
	"testing"
)

func TestCheckAndResolve(t *testing.T) {
	for _, tt := range []struct {
		in, want, err string // want: Resolve's address; err: a part of the message
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", ""},
		{"[::ffff:127.0.0.1]:7777", "127.0.0.1:7777", ""},
		{"[::1]:7777", "[::1]:7777", ""},
		{"host:notaport", "", `port "notaport" is not 1-65535`},
		{"127.0.0.1:0", "", `port "0" is not 1-65535`},
		{"127.0.0.1:70000", "", `port "70000" is not 1-65535`},
		{":8080", "", "has no host"},
		{"127.0.0.1", "", "is not host:port"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			err := Check(tt.in)
			ap, rerr := Resolve(context.Background(), tt.in)
			if tt.err == "" {
				if err != nil || rerr != nil || ap.String() != tt.want {
					t.Errorf("Check = %v, Resolve = %v, %v; want %s", err, ap, rerr, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Check = %v, want an error containing %q", err, tt.err)
			}
			if rerr == nil || rerr.Error() != err.Error() {
				t.Errorf("Resolve = %v, want Check's error %v", rerr, err)
			}
		})
	}
}
