package engine

import (
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
)

// EmbeddedConfig is the reference server configuration a run of plan with
// no target starts (free loopback ports, the parts its protocol needs,
// the scenario's embedded_server settings), for a caller that starts the
// server itself and hands it to runs through Config.EmbeddedAt (`capacity`
// keeps one server through a step's warm-up and judged runs).
func EmbeddedConfig(plan *scenario.Plan) (refserver.Config, error) {
	return embeddedConfig(plan.Protocol, plan.Embedded)
}
