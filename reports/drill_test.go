package reports

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

// drillRun is passingRun with a drill: a kill -9 at +1 s the target
// answered again from 400 ms later and a SIGSTOP at +3 s from 1.2 s
// later; no room leaked. dead makes the second fault never come back
// and a room listed but dead.
func drillRun(t testing.TB, dead bool) *result.Run {
	r := passingRun(t)
	r.DurationNS = 6 * time.Second // the faults within it, on the charts
	for sec := int64(2); sec < 6; sec++ {
		r.TimeSeries = append(r.TimeSeries, pointOf(t, sec, 60, 10, ramp(300, 500, 50)...))
	}
	kill, stop := "SIGKILL at +1s, then restart", "SIGSTOP at +3s for 1s, then SIGCONT"
	r.Outages = []result.Outage{
		{StartNS: time.Second, LastUpNS: 900 * time.Millisecond, EndNS: 1400 * time.Millisecond, Back: true, Kind: result.DownExited, Exit: "killed by SIGKILL", Fault: kill},
		{StartNS: 3 * time.Second, LastUpNS: 2900 * time.Millisecond, EndNS: 4200 * time.Millisecond, Back: true, Kind: result.DownSilent, Fault: stop},
	}
	r.Drill = &result.Drill{
		Faults: []result.FaultResult{
			{Fault: kill, AtNS: time.Second, WentDown: true, Recovered: true, RecoveredAfterNS: 400 * time.Millisecond,
				BaselineSuccess: 1, BaselineSeconds: 1, SuccessBack: true, SuccessBackAfterNS: time.Second, SessionsLost: 4},
			{Fault: stop, AtNS: 3 * time.Second, WentDown: true, Recovered: true, RecoveredAfterNS: 1200 * time.Millisecond,
				BaselineSuccess: 0.98, BaselineSeconds: 1, SuccessBack: true, SuccessBackAfterNS: 2 * time.Second, SessionsLost: 12},
		},
		Rooms: &result.RoomCheck{AtNS: 5 * time.Second, Listed: 3, Probed: 3, Answered: 3},
	}
	if dead {
		r.Outages[1].Back, r.Outages[1].EndNS = false, 0
		f := &r.Drill.Faults[1]
		f.Recovered, f.RecoveredAfterNS, f.SuccessBack, f.SuccessBackAfterNS = false, 0, false, 0
		f.Error = "fault SIGSTOP at +3s for 1s, then SIGCONT: context canceled"
		r.Drill.Rooms = &result.RoomCheck{AtNS: 5 * time.Second, Listed: 3, Probed: 3, Answered: 2,
			Dead: []result.DeadRoom{{ID: 7, Port: 40123, State: "Playing", Players: 2, Detail: "no SERVER_HELLO from 127.0.0.1:40123 to CLIENT_HELLO within 1s (3 tries)"}}}
	}
	r.NoteTargetDown()
	return r
}

// TestDrillFormats: a drill whose faults all recovered is not TARGET
// DOWN and says so in the verdict; one with a fault not recovered is
// TARGET DOWN, and JUnit fails that fault's testcase and the rooms'.
// Every format says each fault.
func TestDrillFormats(t *testing.T) {
	tests := []struct {
		name, status string
		dead         bool
		says         string
		junitFails   []string
	}{
		{"all recovered", result.StatusPass, false, "PASS · all 2 thresholds passed; drill: 2 faults, all recovered (answering again after: 400 ms / 1.2 s)", nil},
		{"one not recovered", result.StatusTargetDown, true, "TARGET DOWN · at +3.0 s (silent), not back by the end", []string{
			`SIGSTOP at +3s for 1s, then SIGCONT: recovered" classname="drill" time="0.000">`,
			`<failure message="the target did not answer again by the end: SIGSTOP at +3s for 1s, then SIGCONT" type="not recovered">`,
			`<failure message="1 listed room(s) do not answer" type="leaked rooms">`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := drillRun(t, tt.dead)
			hl := r.Headline()
			if hl.Status != tt.status || !strings.HasPrefix(hl.Text, tt.says) {
				t.Fatalf("headline %+v, want status %s and %q first", hl, tt.status, tt.says)
			}
			if tt.dead && !strings.Contains(hl.Text, "caused by the drill's fault SIGSTOP at +3s") || tt.dead && !strings.Contains(hl.Text, "1 not recovered by the end") {
				t.Errorf("headline %q does not name the fault not recovered", hl.Text)
			}
			var term, md, j, h bytes.Buffer
			for _, w := range []error{WriteRunTable(&term, r), WriteRunMarkdown(&md, r), WriteRunJUnit(&j, r), WriteHTML(&h, HTMLOptions{}, r)} {
				if w != nil {
					t.Fatal(w)
				}
			}
			for _, f := range r.Drill.Faults {
				for name, out := range map[string]string{"terminal": term.String(), "Markdown": md.String(), "JUnit": j.String(), "HTML": h.String()} {
					if name == "HTML" {
						out = strings.ReplaceAll(out, "&#43;", "+")
					}
					if !strings.Contains(out, f.Fault) {
						t.Errorf("%s does not name %q", name, f.Fault)
					}
				}
				if !slices.Contains(paragraphs(term.String()), "Recovery drill: "+flat(strings.Join(r.Drill.Lines(), " "))) || !strings.Contains(flat(term.String()), f.Line()) {
					t.Errorf("terminal lacks the line %q", f.Line())
				}
			}
			for _, s := range tt.junitFails {
				if !strings.Contains(j.String(), s) {
					t.Errorf("JUnit lacks %q:\n%s", s, j.String())
				}
			}
			if n := strings.Count(j.String(), `classname="drill"`); n != 3 {
				t.Errorf("JUnit has %d drill testcases, want 3 (2 faults, the rooms)", n)
			}
			if !tt.dead && strings.Contains(j.String(), `type="not recovered"`) {
				t.Error("JUnit fails a recovered fault")
			}
			// A labelled line per fault on each of the three time charts.
			if n := strings.Count(h.String(), `<line class="fault" x1`); n < 3*2 {
				t.Errorf("HTML has %d fault lines, want one per fault on each time chart", n)
			}
			for _, label := range []string{">1 SIGKILL</text>", ">2 SIGSTOP</text>", "<h3>Recovery drill</h3>"} {
				if !strings.Contains(h.String(), label) {
					t.Errorf("HTML lacks %q", label)
				}
			}
			// JSON keeps it all.
			var js bytes.Buffer
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			back, err := result.ReadRun(bytes.NewReader(js.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(back.Drill)
			b, _ := json.Marshal(r.Drill)
			if !bytes.Equal(a, b) {
				t.Errorf("drill after JSON %s, want %s", a, b)
			}
		})
	}
}

// TestDrillGolden: every format of a drill with a fault not recovered
// and a leaked room, whole.
func TestDrillGolden(t *testing.T) {
	r := drillRun(t, true)
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"run_drill_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, r) }},
		{"run_drill.md", func(b *bytes.Buffer) error { return WriteRunMarkdown(b, r) }},
		{"run_drill_junit.xml", func(b *bytes.Buffer) error { return WriteRunJUnit(b, r) }},
		{"run_drill.json", func(b *bytes.Buffer) error { return WriteJSON(b, r) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.file), b.Bytes())
		})
	}
	t.Run("run_drill.html", func(t *testing.T) {
		var b bytes.Buffer
		if err := WriteHTML(&b, HTMLOptions{}, r); err != nil {
			t.Fatal(err)
		}
		checkHTMLGolden(t, "run_drill.html", b.Bytes())
	})
}

// TestMergeKeepsDrill: the drill is one process's; a merge of shards
// keeps it.
func TestMergeKeepsDrill(t *testing.T) {
	a, b := drillRun(t, false), passingRun(t)
	for _, order := range [][]*result.Run{{a, b}, {b, a}} {
		m, err := result.Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		if m.Drill != a.Drill {
			t.Errorf("merged drill %+v, want the shard's", m.Drill)
		}
	}
}
