package conformance

import (
	"context"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// TestProgress: Config.Progress is told of each case as it is done, once:
// done counting 1 to the number of cases, the total each time, and the
// section of the case just done.
func TestProgress(t *testing.T) {
	srv := startRef(t)
	type call struct {
		done, total int
		section     string
	}
	var calls []call
	cfg := Config{Target: srv.Addr(tcpwire.ProtocolName).String(), Protocol: protoTCP, Patterns: []string{"tcp-lobby/2.2", "tcp-lobby/5.1"},
		Progress: func(done, total int, section string) { calls = append(calls, call{done, total, section}) }}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rep.Cases)
	if n < 2 || len(calls) != n {
		t.Fatalf("%d progress calls for %d cases: %+v", len(calls), n, calls)
	}
	sections := map[string]int{}
	for _, k := range rep.Cases {
		sections[k.Section]++
	}
	for i, c := range calls {
		if c.done != i+1 || c.total != n || sections[c.section] == 0 {
			t.Errorf("call %d: %+v, want done %d of %d and a section of the suite's (%v)", i+1, c, i+1, n, sections)
		}
		sections[c.section]--
	}
}
