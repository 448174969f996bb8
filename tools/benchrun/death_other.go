//go:build !linux

package main

import "os/exec"

// setDeathSignal: only Linux has a parent-death signal; elsewhere a
// SIGKILLed benchrun can leave its children running.
func setDeathSignal(*exec.Cmd) {}
