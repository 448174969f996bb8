//go:build !linux

package owned

import (
	"fmt"
	"runtime"
)

func readProc(int) (reading, error) {
	return reading{}, fmt.Errorf("process telemetry reads /proc: %w (%s)", ErrUnsupported, runtime.GOOS)
}
