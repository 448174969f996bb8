// Package result is lobbybench's result model: the versioned JSON
// documents `lobbybench run`, `conform` and `capacity` write (kinds "run",
// "conform" and "capacity") and everything that judges them without
// rendering them: reading them back (Read), the exact merge of sharded
// runs (Merge), regression comparison and its gates (Compare,
// CompareConform, CompareCapacity), the headline verdict every format
// leads with (Headline: TARGET DOWN, INTERRUPTED, NO LOAD, INCOMPLETE, FAIL,
// INCONCLUSIVE, PASS), the harness-bound judgement, the recovery drill's
// findings, the threshold metrics of a run (RunMetrics) and the one
// evaluation of thresholds (Evaluate, EvaluateThresholds, Reevaluate).
//
// The documents, their fields, the histogram encoding and the merge rules
// are specified in SCHEMA.md. The renderers of every format (terminal,
// JSON, Markdown, JUnit, HTML) are package reports; this package imports
// no renderer, so the load engine, the recorder, the scenario parser and
// the conformance suite depend on the model alone.
package result
