package capacity

import (
	"fmt"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// stepFiles is the open files one process of a step needs: its clients
// (a closed model's client count; an open model's peak of live sessions,
// peak, as its first run measured it, which max_clients only bounds), the
// step's embedded server srv (nil: none in this process) and the margin,
// against limit. With workers > 0 the clients are spread over that many
// worker processes and the server is the parent's: one worker's share is
// counted.
func stepFiles(plan *scenario.Plan, shard engine.Shard, load float64, peak int64, workers int, srv *refserver.Config, limit uint64) engine.Files {
	clients := int(peak)
	if plan.Load.Model == scenario.Closed {
		clients = shard.Part(int(load))
	}
	f := engine.Files{Margin: engine.FilesMargin, Limit: limit}
	if workers > 0 {
		f.Clients = (clients + workers - 1) / workers
		return f
	}
	f.Clients = clients
	if srv != nil {
		f.Server = engine.ServerFiles(*srv, clients)
	}
	return f
}

// filesWarning is the step's one open-files warning: what it needs, said
// from its own load, when that is over the limit ("" when it fits).
func filesWarning(plan *scenario.Plan, load float64, f engine.Files, workers int) string {
	if f.Fits() {
		return ""
	}
	u, clients := "/s", fmt.Sprintf("%d live sessions at the peak of its first run", f.Clients)
	if plan.Load.Model == scenario.Closed {
		u, clients = " clients", fmt.Sprintf("%d clients", f.Clients)
	}
	per := ""
	if workers > 0 {
		per = " per worker process"
	}
	server := ""
	if f.Server > 0 {
		server = fmt.Sprintf(" + %d for the embedded server", f.Server)
	}
	return fmt.Sprintf("warning: the step at %s needs about %d open files%s (%s%s + %d margin) against an open-files limit (RLIMIT_NOFILE) of %d: sessions beyond it fail to start; spread them over processes with --workers auto (or --workers N)",
		result.FormatLoad(load, u), f.Needed(), per, clients, server, f.Margin, f.Limit)
}
