package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

const exampleCaseFile = "../../scenarios/cases/udp-lobby.yaml"

// TestConformUserCases: conform --cases FILE end to end: the file's cases
// pass against the reference server (0), fail against a wrong one (1),
// and a bad file is a usage error at its line before anything is sent (2).
func TestConformUserCases(t *testing.T) {
	srv := startConformRef(t)
	ref := srv.Addr(udpwire.ProtocolName).String()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("protocol: udp-lobby\ncases:\n  - id: my/1\n    level: MUST\n    requirement: x\n    steps:\n      - send: {message: LOBBY_CREATE_ROMO}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  []string // in stdout (stderr for a usage error)
	}{
		{"pass beside a built-in case", []string{"--target", ref, "--cases", exampleCaseFile + ",my,udp-lobby/4"}, exitOK,
			[]string{"✔ my/1", "✔ my/3", "✔ my/4", "✔ my/5", "✔ udp-lobby/4/1", "6 cases in"}},
		{"only the file's", []string{"--target", ref, "--cases", exampleCaseFile + ",my/1"}, exitOK, []string{"✔ my/1", "1 case in"}},
		{"a MUST fails", []string{"--target", echoServer(t), "--header", "spec", "--timeout", "300ms", "--cases", exampleCaseFile + ",my/1"}, exitFailed,
			[]string{"✘ my/1", "U-DIRECTION broken", "received: 01 42", "wire:"}},
		{"bad file", []string{"--target", ref, "--cases", bad}, exitUsage, []string{"bad.yaml:7:", `did you mean "LOBBY_CREATE_ROOM"`}},
		{"protocol mismatch", []string{"--target", ref, "--protocol", "tcp-lobby", "--cases", exampleCaseFile}, exitUsage, []string{"udp-lobby's", "tcp-lobby"}},
		{"missing file", []string{"--target", ref, "--cases", "nope.yaml"}, exitUsage, []string{"nope.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCLI(t, tc.code, tc.out, nil, append([]string{"conform"}, tc.args...)...)
		})
	}
}

// TestConformUserCasesList: --list shows a file's cases, and --cases
// patterns select among them and the built-in ones.
func TestConformUserCasesList(t *testing.T) {
	code, out, errs := runCLI(t, "conform", "--list", "--cases", exampleCaseFile+",my/2,udp-lobby/4")
	if code != exitOK || !strings.Contains(out, "my/2 ") || strings.Contains(out, "my/1") || !strings.Contains(out, "udp-lobby/4/1") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "conform", "--list", "--cases", exampleCaseFile)
	if code != exitOK || !strings.Contains(out, "my/3") || !strings.Contains(out, "udp-lobby/13/1") {
		t.Errorf("beside the built-in: exit %d, stdout %q", code, out)
	}
}

// TestConformUserCasesHeader: a case file's header_profile that
// disagrees with --header is a usage error naming the file's line and
// both values, before anything is sent; one that agrees, or a file that
// gives none, is not.
func TestConformUserCasesHeader(t *testing.T) {
	file := filepath.Join(t.TempDir(), "h.yaml")
	if err := os.WriteFile(file, []byte("protocol: udp-lobby\nheader_profile: rtype17\ncases:\n  - id: my/h\n    level: MUST\n    requirement: x\n    steps: [{send: LOBBY_LIST_ROOMS}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"disagreeing", []string{"--header", "spec", "--cases", file}, exitUsage, "h.yaml:2: header_profile is rtype17, and --header spec: they disagree"},
		{"agreeing", []string{"--header", "rtype17", "--cases", file}, exitOK, ""},
		{"no --header", []string{"--cases", file}, exitOK, ""},
		{"no header_profile", []string{"--header", "spec", "--cases", exampleCaseFile}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"conform", "--list"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.err) {
				t.Fatalf("exit %d, want %d with %q\n%s\n%s", code, tc.code, tc.err, out, errs)
			}
		})
	}
}

// TestConformCaseAndSection: --case selects cases by their exact ids (a
// case file's too, and not a longer id it is a prefix of), --section every
// case under a section, both beside what --cases selects; an id or a
// section that no case has is a usage error naming it and the nearest.
func TestConformCaseAndSection(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.yaml")
	steps := "    level: MUST\n    requirement: x\n    steps:\n      - send: {message: LOBBY_LIST_ROOMS}\n"
	if err := os.WriteFile(file, []byte("protocol: udp-lobby\ncases:\n  - id: my/1\n"+steps+"  - id: my/1/2\n"+steps), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		want, not []string // in stdout (stderr for a usage error); not in it
	}{
		{"an id", []string{"--case", "udp-lobby/5/2"}, exitOK, []string{"udp-lobby/5/2 ", "\n1 case\n"}, []string{"udp-lobby/5/1 "}},
		{"an older build's id", []string{"--case", "udp/5/2"}, exitOK, []string{"udp-lobby/5/2 ", "\n1 case\n"}, nil},
		{"a file's id, not the longer one", []string{"--cases", file, "--case", "my/1"}, exitOK, []string{"my/1 ", "\n1 case\n"}, []string{"my/1/2"}},
		{"a section", []string{"--section", "udp-lobby/13"}, exitOK, []string{"udp-lobby/13/1 "}, []string{"udp-lobby/5/2 ", "udp-lobby/1/"}},
		{"beside --cases", []string{"--cases", "udp-lobby/4", "--case", "udp-lobby/5/2", "--section", "udp-lobby/13"}, exitOK,
			[]string{"udp-lobby/4/1 ", "udp-lobby/5/2 ", "udp-lobby/13/1 "}, []string{"udp-lobby/5/1 "}},
		{"no such id", []string{"--case", "udp-lobby/5/99"}, exitUsage, []string{`--case: no udp-lobby case "udp-lobby/5/99"; did you mean`}, nil},
		{"no such section", []string{"--section", "udp-lobby/99"}, exitUsage, []string{`--section: no udp-lobby case is under "udp-lobby/99"`}, nil},
		{"a glob for a section", []string{"--section", "udp-lobby/1*"}, exitUsage, []string{"a glob goes in --cases"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCLI(t, tc.code, tc.want, tc.not, append([]string{"conform", "--list"}, tc.args...)...)
		})
	}
}

// wantCLI runs lobbybench with args and wants exit code, every string of
// want in its output and none of not: stdout, or stderr for a usage error.
func wantCLI(t *testing.T, code int, want, not []string, args ...string) {
	t.Helper()
	got, out, errs := runCLI(t, args...)
	if got != code {
		t.Fatalf("exit %d, want %d\n%s\n%s", got, code, out, errs)
	}
	if code == exitUsage {
		out = errs
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, w := range not {
		if strings.Contains(out, w) {
			t.Errorf("output has %q:\n%s", w, out)
		}
	}
}
