package levwire

import (
	"slices"
	"testing"
)

func TestPackAcks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ids       []uint32
		r         AckReading
		wantStart uint32
		wantBytes []byte
		packed    int
	}{
		// The server acking the client's first packet.
		{"engine single", []uint32{1001}, AckEngine, 1001, []byte{0x01}, 1},
		// Seed reading: StartAck is one below the first id, bit 0 still set.
		{"seed single", []uint32{1001}, AckSeedPlusOne, 1000, []byte{0x01}, 1},
		// Unsorted input, gaps, bit order least significant first.
		{"engine gaps", []uint32{1010, 1001, 1003}, AckEngine, 1001, []byte{0x05, 0x02}, 3},
		{"seed gaps", []uint32{1010, 1001, 1003}, AckSeedPlusOne, 1000, []byte{0x05, 0x02}, 3},
		// Full window of 32 ids: four 0xff bytes.
		{"engine full window", seq(5, 32), AckEngine, 5, []byte{0xff, 0xff, 0xff, 0xff}, 32},
		// The 33rd id does not fit; it is not packed.
		{"engine overflow", seq(5, 33), AckEngine, 5, []byte{0xff, 0xff, 0xff, 0xff}, 32},
		// Trailing zero bytes are dropped: ids 7 and 15 need two bytes, not four.
		{"engine drop zero tail", []uint32{7, 15}, AckEngine, 7, []byte{0x01, 0x01}, 2},
		// Highest id in the window sets bit 7 of byte 3.
		{"engine last bit", []uint32{100, 131}, AckEngine, 100, []byte{0x01, 0, 0, 0x80}, 2},
		// Duplicates count twice but set one bit.
		{"engine duplicates", []uint32{9, 9}, AckEngine, 9, []byte{0x01}, 2},
		// Id 0 is never acked; nothing left means no ack field.
		{"engine zero only", []uint32{0}, AckEngine, 0, nil, 0},
		{"empty", nil, AckEngine, 0, nil, 0},
		// Under seed+1 id 1 would need StartAck 0, which means "no acks".
		{"seed id 1 unrepresentable", []uint32{1}, AckSeedPlusOne, 0, nil, 0},
		{"seed id 1 skipped", []uint32{1, 2}, AckSeedPlusOne, 1, []byte{0x01}, 1},
		// Near the top of uint32.
		{"engine max id", []uint32{0xffffffff}, AckEngine, 0xffffffff, []byte{0x01}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, n := PackAcks(tc.ids, tc.r)
			if f.Start != tc.wantStart || !slices.Equal(f.Bytes(), tc.wantBytes) || n != tc.packed {
				t.Fatalf("PackAcks = start %d bytes %x packed %d; want %d %x %d", f.Start, f.Bytes(), n, tc.wantStart, tc.wantBytes, tc.packed)
			}
			if f.Empty() != (len(tc.wantBytes) == 0) {
				t.Fatal("Empty disagrees with Bytes")
			}
			// Every packed id is reported back by both readers, and only those.
			got := AppendAckedIDs(nil, f.Start, f.Bytes(), tc.r)
			for _, id := range got {
				if !slices.Contains(tc.ids, id) || !f.Has(id, tc.r) {
					t.Fatalf("decoded id %d was not asked for (ids %v)", id, tc.ids)
				}
			}
			uniq := slices.Compact(slices.Sorted(slices.Values(got)))
			if len(uniq) != len(got) || !slices.IsSorted(got) {
				t.Fatalf("AppendAckedIDs not sorted/unique: %v", got)
			}
		})
	}
}

func seq(from uint32, n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = from + uint32(i)
	}
	return s
}

func TestAckedIDsReadings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start uint32
		bits  []byte
		r     AckReading
		want  []uint32
	}{
		{"engine byte0 bit0", 1001, []byte{0x01}, AckEngine, []uint32{1001}},
		{"seed byte0 bit0", 1001, []byte{0x01}, AckSeedPlusOne, []uint32{1002}},
		{"engine bits 0,1,7", 10, []byte{0x83}, AckEngine, []uint32{10, 11, 17}},
		{"seed bits 0,1,7", 10, []byte{0x83}, AckSeedPlusOne, []uint32{11, 12, 18}},
		{"engine byte1 bit0", 10, []byte{0x00, 0x01}, AckEngine, []uint32{18}},
		{"seed byte1 bit0", 10, []byte{0x00, 0x01}, AckSeedPlusOne, []uint32{19}},
		// Lenient decoding accepts more than 4 bytes; they still count.
		{"engine five bytes", 1, []byte{0, 0, 0, 0, 0x01}, AckEngine, []uint32{33}},
		{"start 0 means none", 0, []byte{0xff}, AckEngine, nil},
		{"wraps like uint32", 0xffffffff, []byte{0x03}, AckEngine, []uint32{0xffffffff, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AppendAckedIDs(nil, tc.start, tc.bits, tc.r)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			for _, id := range tc.want {
				if id == 0 {
					continue // wrapped; Acked works on the unwrapped distance
				}
				if !Acked(tc.start, tc.bits, id, tc.r) {
					t.Fatalf("Acked(%d) false", id)
				}
			}
			if Acked(tc.start, tc.bits, tc.start+uint32(8*len(tc.bits))+1, tc.r) {
				t.Fatal("Acked beyond the field")
			}
		})
	}
}
