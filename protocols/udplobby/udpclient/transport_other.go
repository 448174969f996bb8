//go:build !linux

package udpclient

import (
	"net/netip"
	"time"
)

// sockio is empty off Linux: the raw reads and writes (recvfrom and sendto
// through the socket's descriptor, and with them precise mode) are
// written for Linux only; the net package's calls serve instead.
type sockio struct{}

// initIO reports that raw reads and writes are not available here.
func (t *transport) initIO() bool { return false }

// waitFD reports that a read here cannot return errWouldBlock (only raw
// reads can): recv parks, and the session keeps its goroutine.
func (t *transport) waitFD() int { return -1 }

// preciseOK reports that precise mode is not available here.
func (t *transport) preciseOK() bool { return false }

// read reads one datagram with the net package (spin is ignored).
func (t *transport) read(time.Time) ([]byte, netip.AddrPort, error) { return t.readNet() }

// write sends b to to with the net package.
func (t *transport) write(b []byte, to netip.AddrPort) error {
	t.stampSend()
	_, err := t.c.WriteToUDPAddrPort(b, to)
	return err
}
