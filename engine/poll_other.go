//go:build !linux

package engine

import "errors"

// poller is not available here: a session's socket waits cannot be
// watched, so sessions that would suspend in them park instead
// (simclient.Resumer.ParkWaits; udpclient suspends only with raw reads,
// which are Linux's).
type poller struct{}

func (p *poller) arm(*Execution, int, *slot, uint32) error {
	return errors.New("engine: no socket poller on this system")
}

func (p *poller) close() {}
