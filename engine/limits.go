package engine

import (
	"fmt"

	"github.com/lobbybench/lobbybench/internal/vflow"
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
	// (Shard.Part of max_clients); 0 on virtual flows.
	Clients int `json:"clients"`
	// Flows is, on virtual flows, the descriptors the flows' hub holds for
	// all of the shard's clients (vflow.HubDescriptors), and
	// VirtualClients those clients, which hold none each.
	Flows          int `json:"flows,omitempty"`
	VirtualClients int `json:"virtual_clients,omitempty"`
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
func (f Files) Needed() int { return f.Clients + f.Flows + f.Server + f.Margin }

// Fits reports whether the estimate is within the limit (true when the
// limit is unknown).
func (f Files) Fits() bool { return f.Limit == 0 || uint64(f.Needed()) <= f.Limit }

// String renders the comparison for a warning.
func (f Files) String() string {
	return fmt.Sprintf("about %d open files (%s) against an open-files limit (RLIMIT_NOFILE) of %d", f.Needed(), f.parts(), f.Limit)
}

// parts says what the estimate is made of.
func (f Files) parts() string {
	clients := fmt.Sprintf("%d clients", f.Clients)
	if f.VirtualClients > 0 {
		clients = fmt.Sprintf("%d for %d clients on virtual flows", f.Flows, f.VirtualClients)
	}
	return fmt.Sprintf("%s + %d for the embedded server + %d margin", clients, f.Server, f.Margin)
}

// EstimateFiles estimates the descriptors shard's part of plan needs, with
// the embedded server srv when not nil (its configuration, as the run
// starts it).
func EstimateFiles(plan *scenario.Plan, shard Shard, srv *refserver.Config) Files {
	clients := shard.Part(plan.Load.MaxClients)
	f := Files{Clients: clients, Margin: FilesMargin, Limit: OpenFilesLimit()}
	if plan.FlowsMode == scenario.FlowsVirtual {
		f.Clients, f.Flows, f.VirtualClients = 0, vflow.HubDescriptors(), clients
	}
	if srv != nil {
		f.Server = ServerFiles(*srv, clients)
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
