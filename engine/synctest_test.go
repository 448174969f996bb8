package engine

import (
	"testing"
	synctestpkg "testing/synctest"
)

// synctest runs f in a bubble with a fake clock, so schedule tests are
// exact and take no real time.
func synctest(t *testing.T, f func(*testing.T)) { synctestpkg.Test(t, f) }

func synctestWait() { synctestpkg.Wait() }
