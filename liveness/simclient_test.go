package liveness_test

import (
	"fmt"
	"testing"

	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// An external test: simclient imports liveness (ErrGarbled).
func TestClassifySimclientRefusal(t *testing.T) {
	if got := liveness.Classify(fmt.Errorf("reach: %w", simclient.ErrRefused)); got != result.DownRefused {
		t.Errorf("Classify(simclient.ErrRefused) = %q, want refused", got)
	}
}
