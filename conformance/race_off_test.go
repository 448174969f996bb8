//go:build !race

package conformance

const raceOn = false
