package tcpwire

import (
	"fmt"
)

// Rule ids reported by this package. They are stable: the conformance suite
// and the load engine report violations by these ids, users grep for them.
// The specification is tcp-lobby.md (docs/protocols).
const (
	// RuleFrameEmpty: a frame's u32 length prefix is 0 (no type byte).
	RuleFrameEmpty = "T-FRAME-EMPTY"
	// RuleFrameTooLarge: a frame's length prefix exceeds the configured maximum (default 4096).
	RuleFrameTooLarge = "T-FRAME-TOO-LARGE"
	// RuleFrameTruncated: the stream ended inside a length prefix or a payload.
	RuleFrameTruncated = "T-FRAME-TRUNCATED"
	// RuleTypeUnknown: the first payload byte is not one of the 18 types of tcp-lobby.md §2.3.
	RuleTypeUnknown = "T-TYPE-UNKNOWN"
	// RuleTypeMismatch: a payload was decoded as a message of another type (caller error).
	RuleTypeMismatch = "T-TYPE-MISMATCH"
	// RuleSizeFixed: a fixed-size message's payload length differs from Appendix A.
	RuleSizeFixed = "T-SIZE-FIXED"
	// RuleSizeCount: a list message's length is not header + count × entry size.
	RuleSizeCount = "T-SIZE-COUNT"
	// RuleSizeError: an ERROR_MSG is shorter than its 2-byte header (type, code).
	RuleSizeError = "T-SIZE-ERROR"
	// RuleCountRooms: LIST_ROOMS_ACK RoomCount exceeds MAX_ROOMS (16).
	RuleCountRooms = "T-COUNT-ROOMS"
	// RuleCountPlayers: a PlayerCount exceeds MAX_PLAYERS (4).
	RuleCountPlayers = "T-COUNT-PLAYERS"
	// RuleStringUnterminated: a char[N] field holds no NUL (strict decode only).
	RuleStringUnterminated = "T-STRING-UNTERMINATED"
	// RuleStringPadding: bytes after a char[N] field's NUL are not zero (Pedantic only; seed says "should").
	RuleStringPadding = "T-STRING-PADDING"
	// RuleBool: a bool byte is neither 0 nor 1 (tcp-lobby.md §3.1).
	RuleBool = "T-BOOL"
	// RuleJoinStatus: a JOIN_ROOM_ACK Status is not 0x00-0x03.
	RuleJoinStatus = "T-JOIN-STATUS"
	// RulePlayerNumber: an occupied PlayerInfo's slot Number is outside 1-4.
	RulePlayerNumber = "T-PLAYER-NUMBER"
	// RuleErrorText: an ERROR_MSG message is not UTF-8, or has non-NUL bytes after a NUL.
	RuleErrorText = "T-ERROR-TEXT"
)

// Levels of a rule, as in docs/protocols: a broken MUST is a fail, a broken
// SHOULD a warn.
const (
	LevelFail = "fail"
	LevelWarn = "warn"
)

// RuleInfo describes one rule id.
type RuleInfo struct {
	ID    string
	Level string // LevelFail or LevelWarn
	Desc  string
}

// LookupRule returns the RuleInfo of id.
func LookupRule(id string) (RuleInfo, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return RuleInfo{}, false
}

// Rules lists every rule id of this package with a one-line description, in
// the order a frame is checked.
var Rules = []RuleInfo{
	{RuleFrameEmpty, LevelFail, "frame length prefix is 0 (no type byte)"},
	{RuleFrameTooLarge, LevelFail, "frame length prefix exceeds the maximum frame size (default 4096)"},
	{RuleFrameTruncated, LevelFail, "stream ended inside a length prefix or payload"},
	{RuleTypeUnknown, LevelFail, "first payload byte is not a packet type of tcp-lobby.md §2.3"},
	{RuleTypeMismatch, LevelFail, "payload decoded as a message of a different type"},
	{RuleSizeFixed, LevelFail, "payload length differs from the fixed size of Appendix A"},
	{RuleSizeCount, LevelFail, "list payload length is not header + count × entry size"},
	{RuleSizeError, LevelFail, "ERROR_MSG shorter than its 2-byte header"},
	{RuleCountRooms, LevelFail, "RoomCount exceeds MAX_ROOMS (16)"},
	{RuleCountPlayers, LevelFail, "PlayerCount exceeds MAX_PLAYERS (4)"},
	{RuleStringUnterminated, LevelFail, "char[N] string has no terminating NUL"},
	{RuleStringPadding, LevelWarn, "bytes after a string's NUL are not zero-filled (pedantic, seed §8.3 'should')"},
	{RuleBool, LevelFail, "bool byte is neither 0 nor 1"},
	{RuleJoinStatus, LevelFail, "JOIN_ROOM_ACK Status outside 0x00-0x03"},
	{RulePlayerNumber, LevelFail, "occupied PlayerInfo slot Number outside 1-4"},
	{RuleErrorText, LevelFail, "ERROR_MSG message is not UTF-8 or has data after a NUL"},
}

// Error is the typed error of every decode and framing failure. Rule is one
// of the Rule* ids; Type is the packet type when known (0 otherwise); Offset
// is the payload offset of the offending field, or -1.
type Error struct {
	Rule   string
	Type   Type
	Offset int
	Msg    string
	Err    error // underlying error, e.g. io.ErrUnexpectedEOF
}

// Error implements error.
func (e *Error) Error() string {
	s := "tcplobby: " + e.Rule + ": "
	if e.Type != 0 {
		s += e.Type.String() + ": "
	}
	s += e.Msg
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (offset %d)", e.Offset)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Rule, so that
// errors.Is(err, &tcplobby.Error{Rule: tcplobby.RuleBool}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Rule == e.Rule && t.Type == 0 && t.Msg == ""
}

// RuleOf returns the rule id carried by err, or "" when err is not (and
// does not wrap) an *Error.
func RuleOf(err error) string {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Rule
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return ""
		}
		err = u.Unwrap()
	}
	return ""
}

func errf(rule string, t Type, off int, format string, args ...any) *Error {
	return &Error{Rule: rule, Type: t, Offset: off, Msg: fmt.Sprintf(format, args...)}
}
