//go:build race

package memfig

// Race says the race detector is on: sync.Pool then drops a share of
// what is put back, at random, so allocation counts are its, not the
// code's.
const Race = true
