//go:build !race

package memfig

// Race says the race detector is on (race_on.go).
const Race = false
