package scenario

import (
	"slices"
	"testing"
)

// TestTopLevelReadsEveryKey checks the decoder's table of top-level keys
// (topLevel) against the keys a scenario may give (topKeys): a key
// accepted but never read would be silently ignored, a key read but not
// accepted would be reported unknown.
func TestTopLevelReadsEveryKey(t *testing.T) {
	var read []string
	for _, k := range topLevel {
		if k.key == "" {
			continue
		}
		if slices.Contains(read, k.key) {
			t.Errorf("topLevel reads %q twice", k.key)
		}
		read = append(read, k.key)
		if !slices.Contains(topKeys, k.key) {
			t.Errorf("topLevel reads %q, which topKeys does not accept", k.key)
		}
	}
	for _, k := range topKeys {
		if !slices.Contains(read, k) {
			t.Errorf("topKeys accepts %q, which topLevel does not read", k)
		}
	}
}
