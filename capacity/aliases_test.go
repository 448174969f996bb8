package capacity

import "github.com/lobbybench/lobbybench/result"

type (
	reportsCapacity = result.Capacity
	reportsStep     = result.CapacityStep
	reportsRule     = result.RuleOnset
)
