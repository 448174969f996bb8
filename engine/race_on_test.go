//go:build race

package engine

// raceOn: the race detector slows everything 5-10×; long runs are left to
// the plain test run.
const raceOn = true
