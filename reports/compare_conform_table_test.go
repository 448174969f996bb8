package reports

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/lobbybench/lobbybench/internal/golden"
	"github.com/lobbybench/lobbybench/result"
)

func TestConformCompareTableGolden(t *testing.T) {
	base, other := sampleConform(), otherConform()
	stopped := sampleConform()
	stopped.Interrupted = true
	tests := []struct {
		file      string
		base, new *result.Conform
		ok        bool
	}{
		{"compare_conform_table.txt", base, other, false},
		{"compare_conform_table_same.txt", base, base, true},
		// an interrupted side leads the table and breaks the gate,
		// though no verdict changed
		{"compare_conform_table_interrupted.txt", base, stopped, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := result.CompareConform(tt.base, tt.new, result.DefaultGates())
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteConformCompareTable(&b, c); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.file), b.Bytes())
			if c.OK() != tt.ok {
				t.Errorf("OK() = %v, want %v", c.OK(), tt.ok)
			}
		})
	}
}
