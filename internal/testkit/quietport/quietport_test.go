package quietport

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// childEnv makes the test binary a child that prints its own range.
const childEnv = "QUIETPORT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		from, to := ownRange()
		fmt.Printf("%d %d\n", from, to)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProcessesPickApart: two processes picking at once take disjoint
// slices of the range, and a process's picks are in its slice and never
// the same twice.
func TestProcessesPickApart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("slices are locked with flock; the range is read from Linux's /proc")
	}
	from, to := ownRange()
	if to-from >= ephemeralLow()-low {
		t.Fatalf("this process picks from all of %d-%d: no slice of its own", from, to-1)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var cfrom, cto int
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &cfrom, &cto); err != nil {
		t.Fatalf("child printed %q: %v", out, err)
	}
	if cfrom < to && from < cto {
		t.Errorf("the child picks from %d-%d, this process from %d-%d: they overlap", cfrom, cto-1, from, to-1)
	}
	seen := map[int]bool{}
	t.Run("picks", func(t *testing.T) {
		for range 20 {
			p := Pick(t, "udp", 3)
			if p < from || p+3 > to || seen[p] {
				t.Fatalf("picked %d: outside %d-%d, or twice", p, from, to-1)
			}
			seen[p] = true
		}
	})
	picked.Lock()
	held := len(picked.used)
	picked.Unlock()
	if held != 0 {
		t.Errorf("%d ports still held after the test that picked them ended", held)
	}
}
