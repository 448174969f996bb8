package capacity

import "github.com/lobbybench/lobbybench/reports"

type (
	reportsCapacity = reports.Capacity
	reportsStep     = reports.CapacityStep
	reportsRule     = reports.RuleOnset
)
