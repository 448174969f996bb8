package engine

import (
	"fmt"

	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// FilesMargin is the descriptors a run needs besides its clients' and the
// embedded server's sockets: standard streams, the Go runtime's poller, the
// metrics listener and its scrapes, result files.
const FilesMargin = 64

// Files is a run's estimate of the file descriptors it needs at its peak,
// compared with the process's open-files limit (RLIMIT_NOFILE).
type Files struct {
	// Clients is one socket per concurrent client of this shard
	// (Shard.Part of max_clients).
	Clients int `json:"clients"`
	// Server is the embedded reference server's sockets: its listeners,
	// the game instances it may open and, for the TCP lobby, one
	// connection per client (0 without an embedded server).
	Server int `json:"server"`
	Margin int `json:"margin"`
	// Limit is RLIMIT_NOFILE's soft value (Go raises it to the hard limit
	// at start); 0 when the platform does not tell.
	Limit uint64 `json:"limit"`
}

// Needed is the estimate's total.
func (f Files) Needed() int { return f.Clients + f.Server + f.Margin }

// Fits reports whether the estimate is within the limit (true when the
// limit is unknown).
func (f Files) Fits() bool { return f.Limit == 0 || uint64(f.Needed()) <= f.Limit }

// String renders the comparison for a warning.
func (f Files) String() string {
	return fmt.Sprintf("about %d open files (%d clients + %d for the embedded server + %d margin) against an open-files limit (RLIMIT_NOFILE) of %d",
		f.Needed(), f.Clients, f.Server, f.Margin, f.Limit)
}

// EstimateFiles estimates the descriptors shard's part of plan needs, with
// the embedded server srv when not nil (its configuration, as the run
// starts it).
func EstimateFiles(plan *scenario.Plan, shard Shard, srv *refserver.Config) Files {
	f := Files{Clients: shard.Part(plan.Load.MaxClients), Margin: FilesMargin, Limit: OpenFilesLimit()}
	if srv != nil {
		f.Server = ServerFiles(*srv, f.Clients)
	}
	return f
}

// ServerFiles estimates the descriptors reference server c needs with
// clients connected: each part's (refserver.Part.Files; e.g. one per
// listener, one per game instance it may open, one per TCP connection).
func ServerFiles(c refserver.Config, clients int) int { return c.Files(clients) }

// ClientsPerProcess is how many clients one process can hold under limit
// with the margin (and no embedded server): what --workers auto divides
// by.
func ClientsPerProcess(limit uint64) int {
	if limit == 0 || limit > 1<<30 {
		return 1 << 30
	}
	return max(int(limit)-FilesMargin, 1)
}
