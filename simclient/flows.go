package simclient

import (
	"fmt"

	"github.com/lobbybench/lobbybench/internal/vflow"
	"github.com/lobbybench/lobbybench/scenario"
)

// vflowAvailable is vflow.Available (a variable: tests make it refuse).
var vflowAvailable = vflow.Available

// ResolveFlows decides how a run of protocol p meets the network under
// mode m (flows_mode, run --flows): the mode that runs, FlowsSockets or
// FlowsVirtual. For FlowsAuto, note says in one line which and why.
// FlowsVirtual where it cannot run is an error saying why: the protocol
// takes no virtual flows, apart (non-empty: why this process cannot own a
// range, e.g. "--workers: ..."), or vflow.Available's message naming the
// privileges to grant.
func ResolveFlows(p scenario.ProtocolName, m scenario.FlowsMode, apart string) (mode scenario.FlowsMode, note string, err error) {
	if m == "" || m == scenario.FlowsSockets {
		return scenario.FlowsSockets, "", nil
	}
	why := p.VirtualFlows()
	if why == nil && apart != "" {
		why = fmt.Errorf("%s", apart)
	}
	if why == nil {
		why = vflowAvailable()
	}
	switch {
	case m == scenario.FlowsVirtual && why != nil:
		return "", "", why
	case m == scenario.FlowsVirtual:
		return scenario.FlowsVirtual, "", nil
	case why != nil:
		return scenario.FlowsSockets, fmt.Sprintf("flows auto: sockets, as virtual flows cannot run: %v", why), nil
	}
	return scenario.FlowsVirtual, "flows auto: virtual (one steered range of 127.0.0.0/8 for every client, vflow)", nil
}

// openFlows opens the run's virtual flows when plan's flows mode says so
// (FlowsAuto resolved here, silently, when the caller did not).
func (sh *Shared) openFlows(plan *scenario.Plan) error {
	mode, _, err := ResolveFlows(plan.Protocol, plan.FlowsMode, "")
	if err != nil {
		return fmt.Errorf("flows virtual: %w", err)
	}
	sh.flowsMode = mode
	if mode != scenario.FlowsVirtual {
		return nil
	}
	h, err := vflow.OpenHub(vflow.Config{}, 0)
	if err != nil {
		return fmt.Errorf("flows virtual: %w", err)
	}
	sh.Flows = h
	return nil
}

// FlowsMode returns the flows mode the run's clients use (the harness
// section's flows).
func (sh *Shared) FlowsMode() scenario.FlowsMode { return sh.flowsMode }

// closeFlows closes the run's virtual flows, after the last session.
func (sh *Shared) closeFlows() error {
	if sh.Flows == nil {
		return nil
	}
	return sh.Flows.Close()
}
