package conformance

import (
	"strings"
	"testing"

	refudp "github.com/lobbybench/lobbybench/protocols/udplobby/udpserver"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// headerCases is a udp-lobby case file whose cases read a created room,
// with header_profile (header, when not "") at line 2.
func headerCases(t *testing.T, header string) *scenario.CaseFile {
	t.Helper()
	key := "\n"
	if header != "" {
		key = "header_profile: " + header + "\n"
	}
	cf, err := scenario.ParseCases("h.yaml", []byte("protocol: udp-lobby\n"+key+`cases:
  - id: my/h
    level: MUST
    requirement: "a created room has a non-zero id"
    steps:
      - send: LOBBY_CREATE_ROOM
      - expect: {message: LOBBY_ROOM_CREATED, where: "roomId > 0"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

// TestUserCasesHeader: a user case's header is the run's: the case
// file's header_profile when --header is not given, --header's when the
// file gives none (auto: the one the reachability check settled), and
// both at once only when they agree; the file's header_profile is the
// built-in cases' header too. Against a lobby that speaks only the
// rtype17 header a case sent in another fails, so each row's pass shows
// which header went out.
func TestUserCasesHeader(t *testing.T) {
	srv, pr := startRefUDP(t, func(c *refudp.Config) { c.Profile = udpwire.ProfileRType17 })
	for _, tc := range []struct {
		name, file string
		flags      []string
		clash      string // the error settling the file gives, if any
	}{
		{"file's header, no --header", "rtype17", nil, ""},
		{"file's auto, no --header", "auto", nil, ""},
		{"--header, file gives none", "", []string{"-header", "rtype17"}, ""},
		{"--header auto, file gives none", "", nil, ""},
		{"both, agreeing", "rtype17", []string{"-header", "rtype17"}, ""},
		{"both, disagreeing", "rtype17", []string{"-header", "spec"}, "h.yaml:2: header_profile is rtype17, and --header spec: they disagree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := headerCases(t, tc.file)
			opts, err := CaseFileOptions(protoUDP, udpOptionsArgs(append(tc.flags, "-instance-ports", pr.String())...), cf)
			if tc.clash != "" {
				if err == nil || !strings.Contains(err.Error(), tc.clash) {
					t.Fatalf("got %v, want %q", err, tc.clash)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			extra, err := UserCases(cf)
			if err != nil {
				t.Fatal(err)
			}
			rep := runSuite(t, Config{Target: srv.Addr().String(), Protocol: protoUDP, Options: opts, Extra: extra, Patterns: []string{"my/h", "udp-lobby/5/1"}})
			for _, id := range []string{"my/h", "udp-lobby/5/1"} {
				if c := caseByID(rep, id); c.Verdict != result.VerdictPass {
					logReport(t, rep)
					t.Errorf("%s: %s: %s / %s", id, c.Verdict, c.Expected, c.Actual)
				}
			}
		})
	}
}
