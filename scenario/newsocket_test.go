package scenario

import (
	"strings"
	"testing"
)

func TestFlowNewSocket(t *testing.T) {
	const base = "protocol: udp-lobby\nload: {model: closed, clients: 2, duration: 1s}\nflows:\n  - name: a\n    steps: [list_rooms]\n"
	tests := []struct {
		extra   string
		want    bool
		wantErr string
	}{
		{"", false, ""},
		{"    new_socket: true\n", true, ""},
		{"    new_socket: false\n", false, ""},
		{"    new_socket: yes\n", false, `test.yaml:6: flow "a" new_socket: unknown value "yes" (want one of true, false)`},
	}
	for _, tc := range tests {
		p, err := Parse("test.yaml", []byte(base+tc.extra))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.extra, err, tc.wantErr)
			}
			continue
		}
		if err != nil || p.Flows[0].NewSocket != tc.want {
			t.Errorf("%q: %v, NewSocket %v, want %v", tc.extra, err, p != nil && p.Flows[0].NewSocket, tc.want)
		}
	}
}
