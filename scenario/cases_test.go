package scenario_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/scenario"
)

// caseHead is a udp-lobby case file up to its first case's steps, which
// start on line 7.
const caseHead = `protocol: udp-lobby
cases:
  - id: my/1
    level: MUST
    requirement: "a created room has an id"
    steps:
`

func TestParseCases(t *testing.T) {
	cf, err := scenario.ParseCases("c.yaml", []byte(caseHead+`      - send: {message: LOBBY_CREATE_ROOM}
      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0", capture: {room: roomId}}
      - think: 10ms
      - repeat: {count: 2}
        steps:
          - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: "${room}"}}
          - expect: {message: [LOBBY_JOIN_SUCCESS, LOBBY_JOIN_FAILED]}
  - id: my/2
    level: MAY
    requirement: "silence after a raw datagram"
    steps:
      - send: {raw: "00ff"}
      - expect: {silence: 100ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cf.Protocol != "udp-lobby" || len(cf.Cases) != 2 {
		t.Fatalf("got protocol %q and %d cases", cf.Protocol, len(cf.Cases))
	}
	c := cf.Cases[0]
	if c.ID != "my/1" || c.Level != "MUST" || c.Line != 3 || len(c.Block.Steps) != 4 || c.Block.Steps[2].Call == nil {
		t.Errorf("case 1: %+v, %d steps", c, len(c.Block.Steps))
	}
	if cf.Cases[1].Level != "MAY" || len(cf.Cases[1].Block.Steps) != 2 {
		t.Errorf("case 2: %+v", cf.Cases[1])
	}
}

// TestParseCasesErrors: every bad input is an error at its place.
func TestParseCasesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string // each must appear in the errors
	}{
		{"unknown message", caseHead + "      - send: {message: LOBBY_CREATE_ROMO}\n",
			[]string{"c.yaml:7:", `did you mean "LOBBY_CREATE_ROOM"`}},
		{"unknown field", caseHead + "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomid: 1}}\n",
			[]string{"c.yaml:7:", `did you mean "roomId"`}},
		{"expression does not compile", caseHead + "      - send: LOBBY_CREATE_ROOM\n      - expect: {message: LOBBY_ROOM_CREATED, where: \"roomId >\"}\n",
			[]string{"c.yaml:8:62: ", "roomId >"}},
		{"capture before set", caseHead + "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: \"${room}\"}}\n",
			[]string{"c.yaml:7:", "room"}},
		{"type mismatch", caseHead + "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: abc}}\n",
			[]string{"c.yaml:7:", "roomId"}},
		{"out of range", caseHead + "      - send: {message: LOBBY_JOIN_ROOM, fields: {roomId: 99999999999}}\n",
			[]string{"c.yaml:7:", "roomId"}},
		{"raw not hex", caseHead + "      - send: {raw: \"zz\"}\n", []string{"c.yaml:7:", "hex"}},
		{"built-in step", caseHead + "      - create_room\n", []string{"c.yaml:7:", "create_room cannot be a case's step"}},
		{"bad level", strings.Replace(caseHead, "MUST", "MUTS", 1) + "      - send: LOBBY_LIST_ROOMS\n",
			[]string{"c.yaml:4:", "MUST"}},
		{"missing requirement", strings.Replace(caseHead, `    requirement: "a created room has an id"`+"\n", "", 1) + "      - send: LOBBY_LIST_ROOMS\n",
			[]string{"c.yaml:3:", `missing key "requirement"`}},
		{"unknown case key", strings.Replace(caseHead, "    level:", "    levle: x\n    level:", 1) + "      - send: LOBBY_LIST_ROOMS\n",
			[]string{"c.yaml:4:", "levle"}},
		{"id with a space", strings.Replace(caseHead, "my/1", "my 1", 1) + "      - send: LOBBY_LIST_ROOMS\n",
			[]string{"c.yaml:3:", "no spaces"}},
		{"duplicate id", caseHead + "      - send: LOBBY_LIST_ROOMS\n" + strings.TrimPrefix(caseHead, "protocol: udp-lobby\ncases:\n") + "      - send: LOBBY_LIST_ROOMS\n",
			[]string{"c.yaml:8:", "also line 3's"}},
		{"no protocol", "cases: []\n", []string{`missing key "protocol"`}},
		{"unknown protocol", "protocol: udp-lobyb\ncases: []\n", []string{"c.yaml:1:", "udp-lobby"}},
		{"another protocol's message", strings.Replace(caseHead, "udp-lobby", "tcp-lobby", 1) + "      - send: LOBBY_CREATE_ROOM\n",
			[]string{"c.yaml:7:", "LOBBY_CREATE_ROOM"}},
		{"no cases", "protocol: udp-lobby\ncases: []\n", []string{"c.yaml:2:", "cases must be a list"}},
		{"yaml syntax", "protocol: udp-lobby\ncases: [\n", []string{"c.yaml:", "YAML syntax"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.ParseCases("c.yaml", []byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func FuzzParseCases(f *testing.F) {
	f.Add([]byte(caseHead + "      - send: LOBBY_CREATE_ROOM\n"))
	f.Add([]byte("protocol: tcp-lobby\ncases: [{id: a/1}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := scenario.ParseCases("f.yaml", b)
		if (cf == nil) == (err == nil) {
			t.Fatalf("file %v and error %v", cf, err)
		}
	})
}

// TestExampleCaseFiles: the example case files load.
func TestExampleCaseFiles(t *testing.T) {
	files, _ := filepath.Glob("../scenarios/cases/*.yaml")
	if len(files) == 0 {
		t.Fatal("no example case file in scenarios/cases")
	}
	for _, f := range files {
		if _, err := scenario.LoadCases(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestCaseTimeout: an expect without within waits the runner's timeout,
// nested ones too; one with within keeps it.
func TestCaseTimeout(t *testing.T) {
	cf, err := scenario.ParseCases("c.yaml", []byte(caseHead+`      - send: LOBBY_CREATE_ROOM
      - expect: LOBBY_ROOM_CREATED
      - expect: {message: LOBBY_ROOM_CREATED, within: 3s}
      - repeat: {count: 1}
        steps: [{expect: LOBBY_ROOM_LIST}]
`))
	if err != nil {
		t.Fatal(err)
	}
	orig := cf.Cases[0].Block
	b := scenario.WithTimeout(*orig, 2*time.Second)
	got := []time.Duration{b.Steps[1].Expect.Within, b.Steps[2].Expect.Within, b.Steps[3].Repeat.Body.Steps[0].Expect.Within}
	if want := []time.Duration{2 * time.Second, 3 * time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if orig.Steps[1].Expect.Within != 0 {
		t.Error("WithTimeout changed the case's own block")
	}
}
