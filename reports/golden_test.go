package reports

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

func TestGolden(t *testing.T) {
	run := sampleRun(t)
	empty := result.NewRun()
	empty.StartedAt = fixedStart
	base := sampleRun(t)
	worse := sampleRun(t)
	worse.Steps[1].Latency = latencyOf(t, ramp(1000, 1300, 45)...)
	worse.Steps[1].Failures, worse.Steps[1].Requests = 9, 54
	worse.Violations = append(worse.Violations, result.Violation{Rule: "U-LEN", Count: 1})
	cmp, err := result.Compare(base, worse, result.DefaultGates())
	if err != nil {
		t.Fatal(err)
	}
	same, err := result.Compare(base, base, result.DefaultGates())
	if err != nil {
		t.Fatal(err)
	}
	conf := sampleConform()
	emptyConf := result.NewConform()
	suite := suiteConform()

	tests := []struct {
		file   string
		render func(*bytes.Buffer) error
	}{
		{"run.json", func(b *bytes.Buffer) error { return WriteJSON(b, run) }},
		{"conform.json", func(b *bytes.Buffer) error { return WriteJSON(b, conf) }},
		{"run_table.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, run) }},
		{"run_table_empty.txt", func(b *bytes.Buffer) error { return WriteRunTable(b, empty) }},
		{"compare_table.txt", func(b *bytes.Buffer) error { return WriteCompareTable(b, cmp) }},
		{"compare_table_same.txt", func(b *bytes.Buffer) error { return WriteCompareTable(b, same) }},
		{"run_junit.xml", func(b *bytes.Buffer) error { return WriteRunJUnit(b, run) }},
		{"run_junit_empty.xml", func(b *bytes.Buffer) error { return WriteRunJUnit(b, empty) }},
		{"conform_junit.xml", func(b *bytes.Buffer) error { return WriteConformJUnit(b, conf) }},
		{"conform.md", func(b *bytes.Buffer) error { return WriteConformMarkdown(b, conf) }},
		{"conform_empty.md", func(b *bytes.Buffer) error { return WriteConformMarkdown(b, emptyConf) }},
		{"conform_suite.txt", func(b *bytes.Buffer) error { return WriteConformText(b, suite, ConformTextOptions{}) }},
		{"conform_suite_quiet.txt", func(b *bytes.Buffer) error { return WriteConformText(b, suite, ConformTextOptions{Quiet: true}) }},
		{"conform_suite.json", func(b *bytes.Buffer) error { return WriteJSON(b, suite) }},
		{"conform_suite_junit.xml", func(b *bytes.Buffer) error { return WriteConformJUnit(b, suite) }},
		{"conform_suite.md", func(b *bytes.Buffer) error { return WriteConformMarkdown(b, suite) }},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
		})
	}
}
