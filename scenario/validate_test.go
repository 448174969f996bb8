package scenario

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
)

// TestInvalidGolden loads every testdata/invalid/*.yaml, which must fail, and
// compares the full list of "file:line: message" errors with its .golden.
// The lists of the registered protocols are "{protocols}" and "{UDP
// protocols}" there, so that the goldens hold whatever protocols are linked
// (go test -tags lobbybench_toy links a fourth).
func TestInvalidGolden(t *testing.T) {
	var udp []string
	for _, p := range Protocols() {
		if p.UDP() {
			udp = append(udp, string(p))
		}
	}
	registered := strings.NewReplacer(orList(ProtocolNames()), "{protocols}", strings.Join(udp, ", "), "{UDP protocols}")
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			p, err := Load(f)
			if err == nil {
				t.Fatalf("loaded %+v, want errors", p)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is %T, want Errors", err)
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(registered.Replace(err.Error())+"\n"))
		})
	}
}

// minimal is a valid scenario that rows of TestValidation break one key at a time.
const minimal = `protocol: udp-lobby
load: {rate: 10/s, duration: 2s}
flows:
  - name: f
    group_size: 2
    steps:
      - create_room: {only: leader}
      - join: {room: created}
`

// TestValidation checks single problems: each row's YAML must give exactly
// the listed messages.
func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // "line: message" fragments, one per expected error
	}{
		{"valid", minimal, nil},
		{"unknown top key suggests", minimal + "thresholdz: []\n", []string{`9: unknown key "thresholdz" in the scenario (did you mean "thresholds"?)`}},
		{"unknown key far from any", minimal + "zzzzzzzz: 1\n", []string{`9: unknown key "zzzzzzzz" in the scenario` + "\n"}},
		{"key in the wrong place", minimal + "max_clients: 5\n", []string{`9: unknown key "max_clients" in the scenario: it belongs under load:`}},
		{"duplicate key", minimal + "protocol: tcp-lobby\n", []string{`9: duplicate key "protocol" in the scenario (first at line 1)`}},
		{"weight zero", strings.Replace(minimal, "group_size: 2", "group_size: 2\n    weight: 0", 1), []string{`6: flow "f": weight must be above 0, got 0`}},
		{"weight not a number", strings.Replace(minimal, "group_size: 2", "group_size: 2\n    weight: heavy", 1), []string{`6: flow "f" weight must be a number, got "heavy"`}},
		{"barrier too big", minimal + "      - barrier: 3\n", []string{`9: flow "f": barrier: n is 3 but the flow's group_size is 2: the barrier could never open`}},
		{"barrier without group", strings.Replace(minimal, "    group_size: 2\n", "", 1) + "      - barrier\n", []string{
			`6: flow "f": create_room: only: leader needs group_size of 2 or more on the flow`,
			`8: flow "f": barrier needs group_size of 2 or more on the flow`}},
		{"negative for", strings.Replace(minimal, "{rate: 10/s, duration: 2s}", "{stages: [{rate: 10/s, for: -1s}], duration: 2s}", 1), []string{`2: load.stages[0].for: negative duration "-1s"`}},
		{"duration without unit", strings.Replace(minimal, "duration: 2s", "duration: 2", 1), []string{`2: load.duration: duration "2" has no unit (want e.g. 2s or 2ms)`}},
		{"rate without period", strings.Replace(minimal, "rate: 10/s", "rate: 10", 1), []string{`2: load.rate: rate "10" has no period (want e.g. 10/s)`}},
		{"zero rate throughout", strings.Replace(minimal, "rate: 10/s", "rate: 0/s", 1), []string{`2: load: the rate is 0 throughout: nothing would run (set rate or stages)`}},
		{"model without load", strings.Replace(minimal, "{rate: 10/s, duration: 2s}", "{model: closed, duration: 2s}", 1), []string{`2: load: the number of clients is 0 throughout`}},
		{"step for other protocol", minimal + "      - echo\n", []string{`9: flow "f": step "echo" is not a udp-lobby step`}},
		{"unknown step", minimal + "      - pingg\n", []string{`9: flow "f": unknown step "pingg" (did you mean "ping"?)`}},
		{"threshold on a rejected step is not reported twice", minimal + "      - pingg\nthresholds: [pingg.p99 < 1s]\n", []string{`9: flow "f": unknown step "pingg" (did you mean "ping"?)`}},
		{"unknown step param", minimal + "      - ping: {cont: 3}\n", []string{`9: unknown key "cont" in the ping step of flow "f" (did you mean "count"?)`}},
		{"join created first", strings.Replace(minimal, "      - create_room: {only: leader}\n", "", 1) + "      - create_room\n", []string{`7: flow "f": join room: created needs a create_room/create step earlier in the flow`}},
		{"room id zero", minimal + "      - join: 0\n", []string{`9: flow "f": join: room must be a room id 1-4294967295, random-waiting or created, got "0"`}},
		{"threshold unknown metric", minimal + "thresholds: [list_rooms.p99 < 1s]\n", []string{`9: threshold "list_rooms.p99 < 1s": unknown metric "list_rooms.p99"`}},
		{"threshold unit", minimal + "thresholds: [join.p99 < 20]\n", []string{`9: threshold "join.p99 < 20": join.p99 is a latency: give a unit, e.g. 20ms`}},
		{"threshold ok", minimal + "thresholds: [join.p99 < 20ms, join.count >= 5, errors.rate < 1%, violations == 0]\n", nil},
		{"source not loopback", minimal + "source_addrs: 192.168.1.1\n", []string{`9: source_addrs: 192.168.1.1 is not a loopback address`}},
		{"source non-loopback target ok", minimal + "target: 10.1.2.3:8080\nsource_addrs: 10.1.2.4-10.1.2.5\n", nil},
		{"on_violation typo", minimal + "on_violation: fail\n", []string{`9: on_violation: unknown value "fail" (want one of continue, fail_step)`}},
		{"on_violation ok", minimal + "on_violation: fail_step\n", nil},
		{"socket buffer", minimal + "socket_buffer: 12\n", []string{`9: socket_buffer: 12 is outside 1KiB-1GiB`}},
		{"flows mode typo", minimal + "flows_mode: virtua\n", []string{`9: flows_mode: unknown value "virtua" (want one of sockets, virtual, auto) (did you mean "virtual"?)`}},
		{"flows mode virtual", minimal + "flows_mode: virtual\n", nil},
		{"flows mode virtual on tcp-lobby", "protocol: tcp-lobby\nload: {rate: 10/s, duration: 2s}\nflows_mode: virtual\nflows:\n  - steps: [connect]\n",
			[]string{`3: flows_mode: virtual flows are UDP only, and tcp-lobby runs over TCP: use sockets`}},
		{"flows mode auto on tcp-lobby", "protocol: tcp-lobby\nload: {rate: 10/s, duration: 2s}\nflows_mode: auto\nflows:\n  - steps: [connect]\n", nil},
		{"percent without sign", minimal + "impairment: {drop: 5}\n", []string{`9: impairment.drop: percentage "5" has no % sign (want e.g. 5%)`}},
		{"arrivals typo", strings.Replace(minimal, "duration: 2s}", "duration: 2s, arrivals: poison}", 1), []string{`2: load.arrivals: unknown value "poison" (want one of uniform, poisson) (did you mean "poisson"?)`}},
		{"arrivals poisson", strings.Replace(minimal, "duration: 2s}", "duration: 2s, arrivals: poisson}", 1), nil},
		{"arrivals on the closed model", strings.Replace(minimal, "{rate: 10/s, duration: 2s}", "{clients: 10, duration: 2s, arrivals: poisson}", 1), []string{`2: load.arrivals applies to the open model (rate), not the closed model`}},
		{"closed over max", strings.Replace(minimal, "{rate: 10/s, duration: 2s}", "{clients: 10, duration: 2s, max_clients: 5}", 1), []string{`2: load.max_clients 5 is below the peak of 10 clients`}},
		{"wrong type for steps", strings.Replace(minimal, "    steps:\n      - create_room: {only: leader}\n      - join: {room: created}\n", "    steps: list_rooms\n", 1), []string{`6: flow "f": steps must be a list, got "list_rooms"`}},
		{"probe over the cap", minimal + "      - rate_probe: {from: 10/s, to: 1000000/s, over: 24h}\n", []string{
			`9: flow "f": rate_probe: sends 43200432000 requests ((from + to)/2 × over), more than the 5000000 a probe may send: shorten over to 9.999s or less at these rates, or lower from and to`}},
		{"probe at the cap", minimal + "      - rate_probe: {from: 0/s, to: 1000000/s, over: 10s}\n", nil},
		{"probe over its highest rate", minimal + "      - rate_probe: {from: 0/s, to: 2000000/s, over: 24h}\n", []string{`9: flow "f": rate_probe: to is over 1000000/s`}},
		{"step with two keys", minimal + "      - {ping: 2, think: 1s}\n", []string{`9: flow "f": a step is one key (its kind) with its parameters under it; found 2 keys`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.yaml))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected errors:\n%v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			es := err.(Errors)
			if len(es) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%v", len(es), len(tt.want), err)
			}
			got := err.Error() + "\n"
			for _, w := range tt.want {
				if !strings.Contains(got, "s.yaml:"+w) {
					t.Errorf("missing %q in:\n%s", "s.yaml:"+w, got)
				}
			}
		})
	}
}

func TestErrorsFormat(t *testing.T) {
	es := Errors{{File: "a.yaml", Line: 3, Msg: "bad"}, {File: "a.yaml", Msg: "empty scenario"}}
	if got := es.Error(); got != "a.yaml:3: bad\na.yaml: empty scenario" {
		t.Errorf("Error() = %q", got)
	}
	var one Error
	if !errors.As(error(es), &one) || one.Line != 3 {
		t.Errorf("errors.As through Unwrap: %+v", one)
	}
	if _, err := Parse("big.yaml", make([]byte, maxFileSize+1)); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized file: %v", err)
	}
	if _, err := Parse("e.yaml", nil); err == nil || err.Error() != "e.yaml: empty scenario" {
		t.Errorf("empty file: %v", err)
	}
	if _, err := Load("testdata/does-not-exist.yaml"); err == nil {
		t.Error("missing file loaded")
	}
}

// TestSyntaxErrorLine checks that a YAML syntax error names the line where
// the text stops being YAML, quoting it, not the line yaml.v3 names (where
// the enclosing node started, often a comment or the line before).
func TestSyntaxErrorLine(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // "line: message" expected in the error
	}{
		{"dedent in a mapping after comments", "# a\n# b\nprotocol: udp-lobby\nload:\n  rate: 10/s\n duration: 2s\n",
			`6: YAML syntax: did not find expected key (indented 1 space, matching neither line 5 (2) nor the block around it (0)): " duration: 2s"`},
		{"dedent inside a sequence item", "flows:\n  - name: f\n   steps: [ping]\n",
			`3: YAML syntax: did not find expected '-' indicator (indented 3 spaces, matching neither line 2 (4) nor the block around it (2)): "   steps: [ping]"`},
		{"sibling after an over-indented key", "load:\n   rate: 10/s\n  duration: 2s\n",
			`3: YAML syntax: did not find expected key (indented 2 spaces, matching neither line 2 (3) nor the block around it (0)): "  duration: 2s"`},
		{"unclosed brace", "protocol: udp-lobby\nload: {rate: 10/s\nflows: []\n",
			`2: YAML syntax: did not find expected ',' or '}': "load: {rate: 10/s"`},
		{"multi-line flow then a bad line", "load: {rate: 10/s,\n  duration: 2s}\nflows:\n  - name: f\n bad: 1\n",
			`5: YAML syntax: did not find expected key`},
		{"unclosed quote", "protocol: udp-lobby\nname: \"abc\nload: {}\n",
			`2: YAML syntax: found unexpected end of stream: "name: \"abc"`},
		{"tab", "load:\n\trate: 10/s\n",
			`2: YAML syntax: found character that cannot start any token: "\trate: 10/s"`},
		{"mapping value in a scalar", "# c\nname: x\nload:\n  rate: 1/s\n    duration: 2s\n",
			`5: YAML syntax: mapping values are not allowed in this context: "    duration: 2s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if got := err.Error(); !strings.Contains(got+"\n", "s.yaml:"+tt.want) {
				t.Errorf("got\n%s\nwant it to contain\ns.yaml:%s", got, tt.want)
			}
		})
	}
}
