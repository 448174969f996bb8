package result

import "strings"

// StatusUnreachable is the headline status of a document that measured
// nothing because the target did not answer the reachability check made
// before anything else is sent (NotStarted; exit 3).
const StatusUnreachable = "unreachable"

// NotStarted is why a command measured nothing: it ended before its load or
// its suite began (the target did not answer its reachability check, a
// Ctrl-C during the wait for a start instant).
// The command still writes every result file it was asked for, each
// leading with it (Headline), so that no file of an earlier run is left
// where CI reads this one's; and no comparison reads it as a measurement
// (Headline.Partial).
type NotStarted struct {
	// Status is StatusUnreachable or StatusInterrupted.
	Status string `json:"status"`
	// Reason says why, in words ("target 127.0.0.1:9 unreachable:
	// connection refused (nothing listens on that UDP port)").
	Reason string `json:"reason"`
}

// headline is the Headline of a document that holds n: "UNREACHABLE ·
// target …: nothing was measured".
func (n *NotStarted) headline() Headline {
	return Headline{Status: n.Status, Text: strings.ToUpper(n.Status) + " · " + n.Reason + ": nothing was measured"}
}
