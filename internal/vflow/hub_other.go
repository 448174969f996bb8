//go:build !linux

package vflow

import (
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
)

// Hub is Linux-only (Available says why); OpenHub fails elsewhere.
type Hub struct{}

// Conn is Linux-only.
type Conn struct{}

// OpenHub fails: virtual flows need Linux.
func OpenHub(Config, int) (*Hub, error) { return nil, Available() }

func (*Hub) Conn() (*Conn, error) { return nil, Available() }
func (*Hub) Unrouted() int64      { return 0 }
func (*Hub) Dropped() int64       { return 0 }
func (*Hub) Close() error         { return nil }

func (*Conn) StampInto(*int64)                      {}
func (*Conn) Connect(netip.AddrPort)                {}
func (*Conn) AddrPort() netip.AddrPort              { return netip.AddrPort{} }
func (*Conn) LocalAddr() net.Addr                   { return &net.UDPAddr{} }
func (*Conn) SyscallConn() (syscall.RawConn, error) { return nil, Available() }
func (*Conn) SetReadDeadline(time.Time) error       { return Available() }
func (*Conn) Close() error                          { return nil }
func (*Conn) WaitReadable() error                   { return Available() }
func (*Conn) Ready() bool                           { return true }
func (*Conn) OnReady(f func())                      { f() }
func (*Conn) ReadMsgUDPAddrPort(_, _ []byte) (n, oobn, flags int, from netip.AddrPort, err error) {
	return 0, 0, 0, from, Available()
}
func (*Conn) WriteToUDPAddrPort([]byte, netip.AddrPort) (int, error)         { return 0, Available() }
func (*Conn) WriteQueued([]byte, netip.AddrPort, *atomic.Int64) (int, error) { return 0, Available() }
