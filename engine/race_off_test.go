//go:build !race

package engine

const raceOn = false
