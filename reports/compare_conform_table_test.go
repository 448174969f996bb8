package reports

import (
	"bytes"
	"testing"
)

func TestConformCompareTableGolden(t *testing.T) {
	base, other := sampleConform(), otherConform()
	tests := []struct {
		file      string
		base, new *Conform
	}{
		{"compare_conform_table.txt", base, other},
		{"compare_conform_table_same.txt", base, base},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := CompareConform(tt.base, tt.new, DefaultGates())
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteConformCompareTable(&b, c); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file, b.Bytes())
		})
	}
}
