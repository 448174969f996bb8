//go:build race

package conformance

// raceOn: the race detector slows every suite several times over.
const raceOn = true
