package udpwire

import "fmt"

// Profile selects the header layout of a datagram. The payloads and the CRC
// trailer are the same in every profile; only the header differs.
type Profile uint8

const (
	// ProfileSpec is the 8-byte header of the protocol page (udp-lobby.md §3.1):
	// packetType u8, messageType u8, sequenceId u16, payloadSize u16,
	// originalSize u16, all big-endian. It is the default.
	ProfileSpec Profile = iota
	// ProfileRType17 is the 17-byte header of the public C++ implementation:
	// magic A3 5F C8 1D, version u8 (bits 0-6 = 1, bit 7 = LZ4 flag),
	// packetType u8, messageType u8, sequenceId u16, tickId u32,
	// payloadSize u16, originalSize u16, all big-endian.
	ProfileRType17
)

// Profiles lists every header profile, in the order GuessProfile tries them.
var Profiles = [...]Profile{ProfileRType17, ProfileSpec}

const (
	specHeaderLen    = 8
	rtype17HeaderLen = 17
	// CRCLen is the size of the CRC-32 trailer of every datagram.
	CRCLen = 4
	// MaxPayload is the largest payloadSize the u16 header field can carry.
	MaxPayload = 0xFFFF
)

// Magic is the 4-byte prefix of every ProfileRType17 header.
var Magic = [4]byte{0xA3, 0x5F, 0xC8, 0x1D}

const (
	// Version is the protocol version carried in bits 0-6 of the
	// ProfileRType17 version byte.
	Version = 1
	// FlagCompressed is bit 7 of the ProfileRType17 version byte: the payload
	// is LZ4-compressed. This package does not decompress.
	FlagCompressed = 0x80
)

// ParseProfile returns the profile named s ("spec" or "rtype17").
func ParseProfile(s string) (Profile, error) {
	switch s {
	case "spec":
		return ProfileSpec, nil
	case "rtype17":
		return ProfileRType17, nil
	}
	return 0, fmt.Errorf("udplobby: unknown header profile %q (want spec or rtype17)", s)
}

// String returns the profile's name as ParseProfile accepts it.
func (p Profile) String() string {
	switch p {
	case ProfileSpec:
		return "spec"
	case ProfileRType17:
		return "rtype17"
	}
	return fmt.Sprintf("Profile(%d)", uint8(p))
}

// Set implements flag.Value, so a Profile can be a command-line flag.
func (p *Profile) Set(s string) error {
	v, err := ParseProfile(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Valid reports whether p is a known profile.
func (p Profile) Valid() bool { return p == ProfileSpec || p == ProfileRType17 }

// HeaderLen returns the size in bytes of the profile's header (8 or 17), or
// 0 for an unknown profile.
func (p Profile) HeaderLen() int {
	switch p {
	case ProfileSpec:
		return specHeaderLen
	case ProfileRType17:
		return rtype17HeaderLen
	}
	return 0
}

// Overhead returns header plus CRC length: the size of a datagram with an
// empty payload (12 or 21).
func (p Profile) Overhead() int { return p.HeaderLen() + CRCLen }

// PacketLen returns the exact datagram size for a payload of n bytes.
func (p Profile) PacketLen(n int) int { return p.HeaderLen() + n + CRCLen }
