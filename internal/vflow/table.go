package vflow

import (
	"encoding/binary"
	"fmt"
	"iter"
	"net/netip"
	"unsafe"
)

// MaxFlowState is the most bytes a flow's state may take in a Table: a
// million flows stay under 64 MiB, and a slot fits a cache line.
const MaxFlowState = 64

// Table is the flow table: one fixed slot of state S per flow, flow i
// being the i-th address:port of the range, addresses first: the first
// port on every address of the block, then the next port on every address
// (Flow). Flows given out in order thus each have an address of their own
// up to the block's size (65,536 for a /16), as players do: a server's
// per-address limits (a request rate, rooms per address) see that many
// sources, not one flooding address. A datagram's flow (Message.Flow)
// finds its slot by arithmetic, without a map. One goroutine at a time.
type Table[S any] struct {
	cfg   Config
	slots []S
}

// NewTable makes the slots of the first n flows of cfg's range.
func NewTable[S any](cfg Config, n int) (*Table[S], error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var zero S
	if size := unsafe.Sizeof(zero); size > MaxFlowState {
		return nil, fmt.Errorf("vflow: flow state %T of %d bytes exceeds %d", zero, size, MaxFlowState)
	}
	if max := (uint64(1) << (32 - cfg.Addrs.Bits())) * uint64(cfg.Ports.Size()); n < 1 || uint64(n) > max {
		return nil, fmt.Errorf("vflow: %d flows, but range %s ports %s holds 1 to %d", n, cfg.Addrs, cfg.Ports, max)
	}
	return &Table[S]{cfg: cfg, slots: make([]S, n)}, nil
}

// Len returns the number of flows.
func (t *Table[S]) Len() int { return len(t.slots) }

// addrs is how many addresses the range's block holds.
func (t *Table[S]) addrs() uint64 { return uint64(1) << (32 - t.cfg.Addrs.Bits()) }

// Flow returns flow i's address:port: address i mod addrs of the block,
// port i / addrs of the range.
func (t *Table[S]) Flow(i int) netip.AddrPort {
	n := t.addrs()
	base := t.cfg.Addrs.Addr().As4()
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], binary.BigEndian.Uint32(base[:])+uint32(uint64(i)%n))
	return netip.AddrPortFrom(netip.AddrFrom4(a), t.cfg.Ports.First+uint16(uint64(i)/n))
}

// Slot returns the state of the flow at ap, or nil when ap is no flow of
// the table (outside the range, or beyond its n flows).
func (t *Table[S]) Slot(ap netip.AddrPort) *S {
	if !ap.Addr().Is4() || !t.cfg.Contains(ap) {
		return nil
	}
	i := uint64(ap.Port()-t.cfg.Ports.First)*t.addrs() + t.place(ap.Addr())
	if i >= uint64(len(t.slots)) {
		return nil
	}
	return &t.slots[i]
}

// OnAddr yields the flows of the table with address a (none when a is not
// in the range): flow i mod addrs of a's place in the block, then every
// addrs-th after it.
func (t *Table[S]) OnAddr(a netip.Addr) iter.Seq[int] {
	return func(yield func(int) bool) {
		if !a.Is4() || !t.cfg.Addrs.Contains(a) {
			return
		}
		step := t.addrs()
		for i := t.place(a); i < uint64(len(t.slots)); i += step {
			if !yield(int(i)) {
				return
			}
		}
	}
}

// place is a's place in the block (a an IPv4 address of it): the index of
// its flow on the range's first port.
func (t *Table[S]) place(a netip.Addr) uint64 {
	base, b := t.cfg.Addrs.Addr().As4(), a.As4()
	return uint64(binary.BigEndian.Uint32(b[:]) - binary.BigEndian.Uint32(base[:]))
}

// At returns flow i's state.
func (t *Table[S]) At(i int) *S { return &t.slots[i] }
