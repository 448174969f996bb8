// Package reports holds lobbybench's result model, the versioned JSON
// documents `lobbybench run` and `lobbybench conform` write (kinds "run" and
// "conform"), and everything that reads them: exact merging of sharded
// runs, regression comparison, and the renderers of every report format.
//
// The documents, their fields, the histogram encoding and the merge rules
// are specified in SCHEMA.md; the formats and the commands that write them
// are listed in docs/formats.md. Every format is golden-tested
// (go test ./reports -update refreshes the files in testdata/).
package reports
