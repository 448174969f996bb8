package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	const rev = "7825997c0ffee0000000000000000000000000aa"
	info := func(mainVersion string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/lobbybench/lobbybench", Version: mainVersion}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{{
		name:    "stamped with -X, from a clean checkout",
		stamped: "v1.2.3",
		bi:      info("(devel)", "vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-26T15:58:52Z", "vcs.modified", "false"),
		want:    "lobbybench v1.2.3 go1.26.8 linux/amd64\nrevision " + rev + " (clean)\ncommitted 2026-11-26T15:58:52Z\n",
	}, {
		name:    "the -X stamp wins over the module version",
		stamped: "v1.2.3",
		bi:      info("v0.0.0-20261126155852-7825997c0ffe+dirty"),
		want:    "lobbybench v1.2.3 go1.26.8 linux/amd64\nrevision unknown (built without VCS information)\n",
	}, {
		name:    "not stamped: the module version of go install ...@v",
		stamped: "dev",
		bi:      info("v0.9.0"),
		want:    "lobbybench v0.9.0 go1.26.8 linux/amd64\nrevision unknown (built without VCS information)\n",
	}, {
		name:    "not stamped, modified tree",
		stamped: "dev",
		bi:      info("v0.0.0-20261126155852-7825997c0ffe+dirty", "vcs.revision", rev, "vcs.time", "2026-11-26T15:58:52Z", "vcs.modified", "true"),
		want:    "lobbybench v0.0.0-20261126155852-7825997c0ffe+dirty go1.26.8 linux/amd64\nrevision " + rev + " (modified: uncommitted changes)\ncommitted 2026-11-26T15:58:52Z\n",
	}, {
		name:    "not stamped, -buildvcs=false",
		stamped: "dev",
		bi:      info("(devel)"),
		want:    "lobbybench dev go1.26.8 linux/amd64\nrevision unknown (built without VCS information)\n",
	}, {
		name:    "no build info at all",
		stamped: "",
		bi:      nil,
		want:    "lobbybench dev go1.26.8 linux/amd64\nrevision unknown (built without VCS information)\n",
	}, {
		name:    "revision without time or modified",
		stamped: "dev",
		bi:      info("", "vcs.revision", rev),
		want:    "lobbybench dev go1.26.8 linux/amd64\nrevision " + rev + "\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionText(tc.stamped, tc.bi, "go1.26.8", "linux", "amd64"); got != tc.want {
				t.Errorf("versionText:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestVersionBuilt builds the binary as make dist does, stamped with
// -ldflags -X main.version, and checks what `lobbybench version` prints:
// the stamp, and the commit of this checkout when the go command can record
// it. It cannot in a linked git worktree (its .git is a file, which the go
// command does not take for a repository: golang/go#58218), nor without git;
// there the build is made with -buildvcs=false and must say so.
func TestVersionBuilt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	head := ""
	if out, err := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "HEAD").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) == 3 && f[0] == f[1] {
			head = f[2] // a primary checkout
		}
	}
	vcs := "-buildvcs=false"
	if head != "" {
		vcs = "-buildvcs=true"
	}
	bin := filepath.Join(t.TempDir(), "lobbybench")
	build := exec.Command("go", "build", vcs, "-trimpath", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("lobbybench version: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	wantFirst := "lobbybench v9.8.7-test " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if lines[0] != wantFirst {
		t.Errorf("first line %q, want %q", lines[0], wantFirst)
	}
	wantRev := "revision unknown (built without VCS information)"
	if head != "" {
		wantRev = "revision " + head + " ("
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], wantRev) {
		t.Errorf("output %q: want a second line starting %q", out, wantRev)
	}
	if head != "" && (len(lines) < 3 || !strings.HasPrefix(lines[2], "committed 20")) {
		t.Errorf("output %q: want the commit time on the third line", out)
	}
	t.Logf("%s (built with %s)", out, vcs)
}
