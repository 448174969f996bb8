package levwire

import "fmt"

// Rule is the stable identifier of a Leviathan wire rule ("L-…"). Conformance
// reports and tests key on it, so existing ids never change meaning.
type Rule string

// Rule ids. The one-line descriptions are in Rules.
const (
	RuleDatagramSize  Rule = "L-DGRAM-SIZE"
	RuleShortHeader   Rule = "L-HDR-SHORT"
	RuleBadType       Rule = "L-TYPE"
	RulePacketIDZero  Rule = "L-PKT-ID-ZERO"
	RuleAckTruncated  Rule = "L-ACK-TRUNC"
	RuleAckCount      Rule = "L-ACK-COUNT"
	RuleAckZeroTail   Rule = "L-ACK-ZERO-TAIL"
	RuleMsgTruncated  Rule = "L-MSG-TRUNC"
	RuleMsgKind       Rule = "L-MSG-KIND"
	RuleMsgType       Rule = "L-MSG-TYPE"
	RuleMsgNumberZero Rule = "L-MSG-NUM-ZERO"
	RuleStringLength  Rule = "L-STR-LEN"
	RuleBool          Rule = "L-BOOL"
	RuleEnum          Rule = "L-ENUM"
	RuleCheckValue    Rule = "L-CHECK-VALUE"
	RulePayload       Rule = "L-PAYLOAD"
	RuleTrailing      Rule = "L-TRAILING"
	RuleAckOnlyTrunc  Rule = "L-LA-TRUNC"
	RuleAckOnlyCount  Rule = "L-LA-COUNT"
	RuleAckOnlyIDZero Rule = "L-LA-ID-ZERO"
	RuleEncode        Rule = "L-ENCODE"
)

// RuleInfo describes one rule: its id, whether only Strict decoding enforces
// it (lenient decoding accepts what the engine accepts), and a one-line text.
type RuleInfo struct {
	ID         Rule
	StrictOnly bool
	Desc       string
}

// Rules lists every rule in a stable order, for reports and --dryrun listings.
var Rules = []RuleInfo{
	{RuleDatagramSize, false, "a datagram is at most 65507 bytes"},
	{RuleShortHeader, false, "the packet header (type, PKT_ID, StartAck, MessageCount / La count) is complete"},
	{RuleBadType, false, "the packet type is 0x4C6E (Ln) or 0x4C61 (La)"},
	{RulePacketIDZero, false, "PKT_ID is not 0"},
	{RuleAckTruncated, false, "when StartAck != 0 the ack byte count and all ack bytes are present"},
	{RuleAckCount, true, "the ack byte count is 1 to 4 (the engine sends at most 4)"},
	{RuleAckZeroTail, true, "the last ack byte is not zero (the engine drops trailing zero bytes)"},
	{RuleMsgTruncated, false, "each of MessageCount messages is complete (header and payload)"},
	{RuleMsgKind, true, "a message starts with 0x28 (request) or 0x12 (response); lenient decoding stops there"},
	{RuleMsgType, true, "the request/response type has a known payload shape; lenient decoding stops there"},
	{RuleMsgNumberZero, true, "MessageNumber starts at 1, so it is not 0"},
	{RuleStringLength, false, "a string's u32 length fits in the rest of the datagram"},
	{RuleBool, true, "a bool byte is 0 or 1"},
	{RuleEnum, true, "AcceptedType, DisallowReason and ServerStatus Status hold a defined value"},
	{RuleCheckValue, true, "Connect carries CheckValue 42 (the engine ignores other values)"},
	{RulePayload, false, "a payload decoded on its own has exactly the bytes of its shape"},
	{RuleTrailing, true, "no bytes follow the last message or the La ids (the engine ignores them)"},
	{RuleAckOnlyTrunc, false, "an La packet holds Count complete u32 ids"},
	{RuleAckOnlyCount, true, "an La packet's Count is 1 to 4 (the engine accepts 0 to 255)"},
	{RuleAckOnlyIDZero, true, "an La packet does not ack PKT_ID 0"},
	{RuleEncode, false, "the encoder was given a value the format cannot carry"},
}

// Describe returns the one-line description of r, or "" if r is unknown.
func Describe(r Rule) string {
	for _, ri := range Rules {
		if ri.ID == r {
			return ri.Desc
		}
	}
	return ""
}

// Error is a decode or encode failure tied to a rule. Offset is the byte
// offset in the datagram where the problem was found (-1 when not applicable).
type Error struct {
	Rule   Rule
	Offset int
	Detail string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("leviathan: %s at byte %d: %s", e.Rule, e.Offset, e.Detail)
	}
	return fmt.Sprintf("leviathan: %s: %s", e.Rule, e.Detail)
}

// Is reports whether target is an *Error with the same Rule, so
// errors.Is(err, &Error{Rule: RuleAckCount}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Rule == e.Rule
}

func errf(r Rule, off int, format string, args ...any) *Error {
	return &Error{Rule: r, Offset: off, Detail: fmt.Sprintf(format, args...)}
}
