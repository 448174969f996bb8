// Package scenario parses a lobbybench YAML scenario (the format is
// specified in docs/scenario.md) into a validated Plan, the one input of the load
// engine.
//
// Load and Parse decode through yaml.Node so every problem keeps its line:
// a broken scenario yields no Plan but Errors, every problem as
// "file:line: message". A Plan they return is valid, defaults filled and
// units resolved, so the engine never re-checks it; command-line flags are
// applied after loading with Plan.Apply. The Plan also carries what the
// engine needs to run it reproducibly (Load.Ramp, PickFlow, NewRand) and
// to judge it afterwards (KnownMetrics, Evaluate).
package scenario
