// Package capacity finds the highest load at which a scenario's
// thresholds (its service-level objective) still hold: `lobbybench
// capacity`. Search runs steps of constant load through a Runner,
// doubling while a step holds, then bisecting between the last load that
// held and the first that broke; EngineRunner runs a step through the
// engine and Judge turns its result into a verdict (PASS, FAIL,
// HARNESS-BOUND, TARGET DOWN). The result is a result.Capacity.
package capacity
