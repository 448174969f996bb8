// Package reports renders lobbybench's results (package result: the
// documents `lobbybench run`, `conform` and `capacity` write) in every
// report format: the terminal tables, JSON, Markdown, JUnit and the
// self-contained HTML page with its SVG charts, each registered in the
// format registry (Formats) that run, conform, capacity and `report` read.
// Verdicts, headlines, merges and comparisons are the model's; reports
// lays them out.
//
// The formats and the commands that write them are listed in
// docs/formats.md; the JSON document is specified in result/SCHEMA.md.
// Every format is golden-tested (go test ./reports -update refreshes the
// files in testdata/).
package reports
