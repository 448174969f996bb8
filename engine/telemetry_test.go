package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/result"
)

// TestTargetProcess: the result model's TargetProcess carries every figure
// of owned's Telemetry, and an account with no samples yet is written with
// an empty list of samples, not null.
func TestTargetProcess(t *testing.T) {
	full := owned.Telemetry{
		Command: "./server -p 0", PIDs: []int{10, 11}, Starts: 2, Exits: []string{"killed by SIGKILL"},
		Samples:      []owned.Sample{{OffsetNS: time.Second, UserNS: 2, SystemNS: 3, RSSBytes: 4, Threads: 5, OpenFDs: 6, Restarted: true}},
		PeakRSSBytes: 4, CPUNS: 5 * time.Millisecond,
	}
	for i := range reflect.TypeFor[owned.Telemetry]().NumField() {
		if reflect.ValueOf(full).Field(i).IsZero() {
			t.Fatalf("the test's Telemetry leaves %s zero: it would not see it dropped", reflect.TypeFor[owned.Telemetry]().Field(i).Name)
		}
	}
	for _, tc := range []struct {
		name string
		in   owned.Telemetry
		note string
		want result.TargetProcess
		json string
	}{{
		name: "every figure",
		in:   full,
		note: "shares the process",
		want: result.TargetProcess{
			Command: "./server -p 0", PIDs: []int{10, 11}, Starts: 2, Exits: []string{"killed by SIGKILL"},
			Samples:      []result.ProcSample{{OffsetNS: time.Second, UserNS: 2, SystemNS: 3, RSSBytes: 4, Threads: 5, OpenFDs: 6, Restarted: true}},
			PeakRSSBytes: 4, CPUNS: 5 * time.Millisecond, Note: "shares the process",
		},
		json: `"restarted":true`,
	}, {
		name: "no samples yet",
		in:   owned.Telemetry{Command: owned.EmbeddedCommand},
		want: result.TargetProcess{Command: owned.EmbeddedCommand, Samples: []result.ProcSample{}},
		json: `"samples":[]`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := TargetProcess(tc.in, tc.note)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("TargetProcess =\n %+v\nwant\n %+v", *got, tc.want)
			}
			b, err := json.Marshal(got)
			if err != nil || !strings.Contains(string(b), tc.json) {
				t.Errorf("JSON %s (%v), want it to contain %s", b, err, tc.json)
			}
		})
	}
}
