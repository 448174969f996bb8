package simclient

import (
	"errors"
	"syscall"
)

// ReasonNoFiles is the failure reason of a session that could not open its
// socket because the process (EMFILE) or the system (ENFILE) ran out of
// file descriptors: the generator's limit, not the server's fault.
const ReasonNoFiles = "too_many_open_files"

// StartError marks a session that could not open its socket or connection
// for a local reason (out of descriptors, no free port, a bind refused): a
// failed start. The load the scenario asked for was not generated, so the
// engine counts it apart from the server's failures and fails the run.
type StartError struct {
	Reason string // ReasonNoFiles or ReasonSocket
	Err    error
}

// Error returns "cannot open a socket: err".
func (e *StartError) Error() string { return "cannot open a socket: " + e.Err.Error() }

// Unwrap returns the socket call's error.
func (e *StartError) Unwrap() error { return e.Err }

// IsFailedStart reports whether err (a session's or a factory's) is, or
// wraps, a *StartError.
func IsFailedStart(err error) bool {
	// AsType, not As: As's target escapes, an allocation on every call,
	// and the engine asks about every session that ends.
	_, ok := errors.AsType[*StartError](err)
	return ok
}

// localErrnos are the errors of socket, bind and connect that say the
// generator's machine, not the target, refused: descriptors, ports, memory.
var localErrnos = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL,
	syscall.EADDRINUSE, syscall.ENOBUFS, syscall.ENOMEM}

// OpenFailure classifies the error of opening a session's socket or
// connection (socket, bind, connect). A local failure (see localErrnos)
// becomes a *StartError with reason ReasonNoFiles (EMFILE, ENFILE) or
// ReasonSocket; any other error is returned unchanged with ReasonSocket.
// Protocol clients call it wherever they open a socket, so every protocol
// names a failed start the same way.
func OpenFailure(err error) (reason string, wrapped error) {
	for _, e := range localErrnos {
		if errors.Is(err, e) {
			reason := ReasonSocket
			if e == syscall.EMFILE || e == syscall.ENFILE {
				reason = ReasonNoFiles
			}
			return reason, &StartError{Reason: reason, Err: err}
		}
	}
	return ReasonSocket, err
}

// OpenError is the error a Factory returns when the session's socket
// could not be opened: a *StepError before the first step (Index -1) with
// OpenFailure's reason, wrapping a *StartError for a local failure.
func OpenError(err error) error {
	reason, err := OpenFailure(err)
	return &StepError{Index: -1, Kind: "socket", Label: "socket", Reason: reason, Err: err}
}
