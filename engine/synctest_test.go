package engine

import (
	"testing"
	synctestpkg "testing/synctest"

	"github.com/lobbybench/lobbybench/internal/precise"
)

// The schedulers wait on the plain timer under the fake clock; the precise
// wait has its own tests (internal/precise).
func init() { waitUntil, waitHeld = precise.OnTimer, precise.OnTimer }

// synctest runs f in a bubble with a fake clock, so schedule tests are
// exact and take no real time.
func synctest(t *testing.T, f func(*testing.T)) { synctestpkg.Test(t, f) }

func synctestWait() { synctestpkg.Wait() }
