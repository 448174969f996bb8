package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/internal/target"
	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// flowsFlag is run --flows, parsed by scenario.ParseFlowsMode into the
// overrides (flows_mode's, which it overrides).
type flowsFlag struct{ o *scenario.Overrides }

func (f flowsFlag) String() string {
	if f.o == nil {
		return ""
	}
	return string(f.o.Flows)
}

func (f flowsFlag) Set(s string) error {
	m, err := scenario.ParseFlowsMode(s)
	if err != nil {
		return err
	}
	f.o.Flows = m
	return nil
}

// addFlowsFlag declares --flows on fs, filling o.Flows.
func addFlowsFlag(fs *flag.FlagSet, o *scenario.Overrides) {
	fs.Var(flowsFlag{o}, "flows", "how clients meet the network: `MODE` "+strings.Join(scenario.FlowsModes, ", ")+
		" (udp-lobby, leviathan: a virtual flow each instead of a socket, needs CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN; auto: virtual where available; overrides flows_mode; default sockets)")
}

// resolveFlows settles plan's flows mode for run (settleFlows); a worker
// says nothing, its parent has.
func (r *runOptions) resolveFlows(e *env, plan *scenario.Plan) int {
	return settleFlows(e, "run", plan, r.o.Flows != "", r.worker)
}

// settleFlows settles plan's flows mode for command cmd (auto: virtual or
// sockets, said in one line on stderr unless quiet) before anything is
// sent; virtual flows that cannot run are a usage error saying why, and
// naming --flows when the flag (given), not flows_mode, asked for them.
// Worker processes (--workers) each take a range of their own (vflow's
// first free block), as two runs on one machine do.
func settleFlows(e *env, cmd string, plan *scenario.Plan, given, quiet bool) int {
	mode, note, err := simclient.ResolveFlows(plan.Protocol, plan.FlowsMode, flowsApart(plan))
	if err != nil {
		what := "flows_mode: virtual"
		if given {
			what = "--flows virtual"
		}
		return usageErr(e, cmd, "%s: %v", what, err)
	}
	if note != "" && !quiet {
		fmt.Fprintf(e.stderr, "lobbybench %s: %s\n", cmd, note)
	}
	plan.FlowsMode = mode
	return exitOK
}

// flowsApart is why plan cannot run on virtual flows whatever the machine
// allows ("" none): source addresses of its own, or a target off loopback
// (vflow.CanReach; a target that does not resolve is left to the run,
// which says so).
func flowsApart(plan *scenario.Plan) string {
	if len(plan.SourceAddrs) > 0 {
		return "source_addrs: a virtual flow's address is its range's, not one of the scenario's"
	}
	if plan.Target == "" || plan.FlowsMode == "" || plan.FlowsMode == scenario.FlowsSockets {
		return "" // the embedded server listens on loopback
	}
	ap, err := target.Resolve(context.Background(), plan.Target)
	if err != nil {
		return ""
	}
	if err := vflow.CanReach(ap.Addr()); err != nil {
		return err.Error()
	}
	return ""
}
