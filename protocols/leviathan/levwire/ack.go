package levwire

// AckReading selects how packed ack bits map to packet ids.
type AckReading uint8

const (
	// AckEngine is the engine's reading (the default): bit b (least
	// significant first) of ack byte i acks StartAck + 8*i + b.
	AckEngine AckReading = iota
	// AckSeedPlusOne is the packet format page's reading, leviathan.md §4: bit b of byte i acks
	// StartAck + 8*i + b + 1.
	AckSeedPlusOne
)

// String implements fmt.Stringer.
func (r AckReading) String() string {
	switch r {
	case AckEngine:
		return "engine"
	case AckSeedPlusOne:
		return "seed+1"
	}
	return "AckReading(?)"
}

func (r AckReading) offset() int64 {
	if r == AckSeedPlusOne {
		return 1
	}
	return 0
}

// AckField is an Ln ack field of at most MaxAckBytes bytes, held by value so
// that building one does not allocate. The zero value means "no acks"
// (StartAck 0, no ack bytes on the wire).
type AckField struct {
	Start uint32
	n     uint8
	b     [MaxAckBytes]byte
}

// Bytes returns the packed ack bytes (trailing zero bytes already dropped).
func (f *AckField) Bytes() []byte { return f.b[:f.n] }

// Empty reports whether the field acks nothing.
func (f *AckField) Empty() bool { return f.n == 0 }

// Has reports whether id is acked by f under r.
func (f *AckField) Has(id uint32, r AckReading) bool { return Acked(f.Start, f.b[:f.n], id, r) }

// PackAcks builds the ack field the engine would send for the set ids: the
// window starts at the smallest id (one below it under AckSeedPlusOne, so
// StartAck stays != 0 only for ids >= 2 there) and covers 8*MaxAckBytes ids;
// trailing zero bytes are dropped. Id 0 is never acked. packed counts the
// entries of ids that the field covers (duplicates included); ids outside the
// window must go in a later packet — test them with f.Has.
func PackAcks(ids []uint32, r AckReading) (f AckField, packed int) {
	off := uint32(r.offset())
	var lo uint32
	found := false
	for _, id := range ids {
		if id <= off { // 0 always; 1 under the seed reading (StartAck would be 0)
			continue
		}
		if !found || id < lo {
			lo, found = id, true
		}
	}
	if !found {
		return AckField{}, 0
	}
	f.Start = lo - off
	for _, id := range ids {
		if id <= off || id < lo {
			continue
		}
		d := id - lo
		if d >= 8*MaxAckBytes {
			continue
		}
		f.b[d/8] |= 1 << (d % 8)
		packed++
		if n := uint8(d/8) + 1; n > f.n {
			f.n = n
		}
	}
	return f, packed
}

// Acked reports whether the ack field (start, bits) acks id under r. It
// returns false when start is 0 (no acks).
func Acked(start uint32, bits []byte, id uint32, r AckReading) bool {
	if start == 0 {
		return false
	}
	d := int64(id) - int64(start) - r.offset()
	if d < 0 || d >= 8*int64(len(bits)) {
		return false
	}
	return bits[d/8]&(1<<(d%8)) != 0
}

// AppendAckedIDs appends to dst, in increasing order, the ids acked by the
// ack field (start, bits) under r. Ids past 2^32-1 wrap, as uint32 arithmetic
// does in the engine. Nothing is appended when start is 0.
func AppendAckedIDs(dst []uint32, start uint32, bits []byte, r AckReading) []uint32 {
	if start == 0 {
		return dst
	}
	base := start + uint32(r.offset())
	for i, v := range bits {
		for b := 0; v != 0 && b < 8; b++ {
			if v&(1<<b) != 0 {
				dst = append(dst, base+uint32(8*i+b))
			}
		}
	}
	return dst
}
