package simclient

import "errors"

// Refusal is a request the server answered with a refusal: what it said
// (Reply), to which request, and what governs it (Hint: the server's
// settings that make it, in the protocol's words). A protocol client
// returns it as a RequestError's Err, so that the run can name the first
// one with its hint.
type Refusal struct {
	Request, Reply string
	Hint           string
}

// Error returns "the server answered REPLY to REQUEST: hint".
func (r *Refusal) Error() string {
	s := "the server answered " + r.Reply + " to " + r.Request
	if r.Hint != "" {
		s += ": " + r.Hint
	}
	return s
}

// IsRefusal reports whether err is, or wraps, a Refusal.
func IsRefusal(err error) bool {
	// AsType, not As: As's target escapes, an allocation on every call,
	// and the engine asks about every session that ends (IsFailedStart).
	_, ok := errors.AsType[*Refusal](err)
	return ok
}
