//go:build !linux

package udpclient

import (
	"net/netip"
	"time"
)

// poller is empty off Linux: precise mode needs recvfrom with MSG_DONTWAIT
// through the socket's raw descriptor, written for Linux only.
type poller struct{}

// initPoll reports that precise mode is not available here.
func (t *transport) initPoll() bool { return false }

// poll is never called (window stays 0).
func (t *transport) poll(time.Time) (int, netip.AddrPort, error, bool) {
	return 0, netip.AddrPort{}, nil, false
}
