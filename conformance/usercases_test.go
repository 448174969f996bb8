package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

const exampleCases = "../scenarios/cases/udp-lobby.yaml"

// userCfg is cfg running the user cases of file alone (their group, my).
func userCfg(t *testing.T, file string, cfg Config) Config {
	t.Helper()
	cf, err := scenario.LoadCases(file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Extra, err = UserCases(cf); err != nil {
		t.Fatal(err)
	}
	cfg.Patterns = []string{"my"}
	return cfg
}

func caseByID(r *result.Conform, id string) result.Case {
	for _, c := range r.Cases {
		if c.ID == id {
			return c
		}
	}
	return result.Case{}
}

// TestUserCasesReference: the example case file passes against the
// reference server, every datagram in its wire log, the instance reached
// through the port LOBBY_ROOM_CREATED named.
func TestUserCasesReference(t *testing.T) {
	srv, pr := startRefUDP(t, nil)
	rep := runSuite(t, userCfg(t, exampleCases, Config{Target: srv.Addr().String(), Protocol: protoUDP, Options: udpLobbyOptions("auto", pr)}))
	if len(rep.Cases) != 5 {
		logReport(t, rep)
		t.Fatalf("%d cases ran, want the file's 5", len(rep.Cases))
	}
	for _, c := range rep.Cases {
		if c.Verdict != result.VerdictPass {
			logReport(t, rep)
			t.Fatalf("%s: %s: %s", c.ID, c.Verdict, c.Actual)
		}
		if len(c.Wire) < 2 || c.Requirement == "" || c.Section == "" {
			t.Errorf("%s: %d wire entries, requirement %q, section %q", c.ID, len(c.Wire), c.Requirement, c.Section)
		}
	}
	hello := caseByID(rep, "my/3").Wire
	if !slices.ContainsFunc(hello, func(w result.WireEntry) bool { return w.Note == "instance" }) {
		t.Errorf("my/3 sent nothing to the instance: %+v", hello)
	}
}

// TestUserCasesFault: against a lobby whose LOBBY_ROOM_CREATED breaks
// the spec, the MUST case that reads it fails, naming the rule and the
// bytes; a lobby that never answers fails it with what the step wanted;
// a lobby that answers a request whatever its CRC fails the case that
// sends one wrong on purpose, naming the reply.
func TestUserCasesFault(t *testing.T) {
	for _, tc := range []struct {
		name, id string
		f        faults
		want     []string
	}{
		{"created long", "my/1", faults{createdLong: true}, []string{"LOBBY_ROOM_CREATED", "broken", "received: 02 43"}},
		{"create silent", "my/1", faults{createSilent: true}, []string{"expected LOBBY_ROOM_CREATED within", "nothing came"}},
		{"no CRC check", "my/4", faults{noCRCCheck: true}, []string{"expected silence", "got LOBBY_ROOM_LIST (hex 02410001"}},
		{"malformed answered", "my/5", faults{replyMalformed: true}, []string{"the reply to LOBBY_LIST_ROOMS to keep U-MALFORMED-REPLY",
			"a reply to a packet sent malformed (random) on purpose; received: 02 46 00 00"}},
		{"bad CRC processed", "my/5", faults{noCRCCheck: true}, []string{"the reply to LOBBY_LIST_ROOMS to keep U-MALFORMED-REPLY",
			"a reply to a packet sent malformed (bad_crc) on purpose; received: 02 41 00 02"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := startTestLobby(t, tc.f, 8)
			cfg := userCfg(t, exampleCases, suiteConfig(l.addr().String(), l.portRange()))
			cfg.Patterns = []string{tc.id}
			rep := runSuite(t, cfg)
			c := caseByID(rep, tc.id)
			if c.Verdict != result.VerdictFail {
				logReport(t, rep)
				t.Fatalf("%s: %s, want a failure", tc.id, c.Verdict)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Expected+" "+c.Actual, w) {
					t.Errorf("%s says %q / %q, lacking %q", tc.id, c.Expected, c.Actual, w)
				}
			}
			if len(c.Wire) == 0 {
				t.Error("no wire log")
			}
		})
	}
}

// TestUserCasesRefused: an id a built-in case has is refused at load.
func TestUserCasesRefused(t *testing.T) {
	cf, err := scenario.ParseCases("c.yaml", []byte(`protocol: udp-lobby
cases:
  - id: udp-lobby/5/1
    level: MUST
    requirement: "x"
    steps: [{send: LOBBY_LIST_ROOMS}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UserCases(cf); err == nil || !strings.Contains(err.Error(), "c.yaml:3: case id udp-lobby/5/1 is a built-in case's") {
		t.Errorf("got %v", err)
	}
}

// TestUserCasesSelected: patterns select user cases as built-in ones, and
// a user case of another protocol is refused.
func TestUserCasesSelected(t *testing.T) {
	cf, err := scenario.LoadCases(exampleCases)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := UserCases(cf)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: "127.0.0.1:1", Protocol: protoUDP, Extra: extra, Patterns: []string{"my/2", "udp-lobby/5"}}
	var ids []string
	for _, c := range cfg.Selected() {
		ids = append(ids, c.ID)
	}
	if !slices.Contains(ids, "my/2") || slices.Contains(ids, "my/1") || !slices.Contains(ids, "udp-lobby/5/1") {
		t.Errorf("selected %v", ids)
	}
	cfg.Protocol = protoTCP
	if errs := cfg.Validate(); len(errs) == 0 {
		t.Error("udp-lobby cases in a tcp-lobby run were not refused")
	}
}
