package simclient

import (
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/script"
)

// TestScriptRecorderMessages: a scripted request is recorded under its
// own message's key when the messages of a session's requests change and
// repeat (the recorder keeps the last message's key), and a renewed
// session's recorder goes on recording under the right keys.
func TestScriptRecorderMessages(t *testing.T) {
	sh, c := baseShared(t, "  - name: f\n    steps: [list_rooms]\n")
	s := newBaseSession(t, sh, 0, &sh.Plan.Flows[0])
	s.script = &scriptState{step: 0}
	r := scriptRecorder{b: &s.Base}
	now := time.Now()
	sent := []string{"A", "B", "B", "A"}
	for i, m := range sent {
		if i == 2 {
			r = r.renewed(&s.Base)
		}
		r.Request(script.Request{Key: script.Key{Message: m}, Intended: now, Sent: now, Received: now.Add(time.Millisecond)})
	}
	run, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, m := range run.Messages {
		got[m.Name] = m.Successes
	}
	if got["A"] != 2 || got["B"] != 2 {
		t.Errorf("messages recorded %v, want A 2 and B 2", got)
	}
}
