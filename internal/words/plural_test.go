package words

import (
	"testing"
)

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{0, "warning", "0 warnings"},
		{1, "warning", "1 warning"},
		{2, "warning", "2 warnings"},
		{1, "source address", "1 source address"},
		{3, "source address", "3 source addresses"},
		{1, "wire log entry", "1 wire log entry"},
		{5, "wire log entry", "5 wire log entries"},
		{2, "day", "2 days"},
		{2, "match", "2 matches"},
	} {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
	if got := Count(uint64(1), "shard"); got != "1 shard" {
		t.Errorf("Count(uint64 1) = %q", got)
	}
	if Agree(1, "its", "their") != "its" || Agree(int64(2), "its", "their") != "their" {
		t.Error("Agree picks the wrong form")
	}
}
