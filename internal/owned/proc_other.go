//go:build !linux

package owned

import (
	"fmt"
	"runtime"
)

func readProc(int) (reading, error) {
	return reading{}, fmt.Errorf("process telemetry reads /proc: %w (%s)", ErrUnsupported, runtime.GOOS)
}

// CanSample says whether this system can sample processes: an error
// naming the system where /proc cannot be read.
func CanSample() error {
	_, err := readProc(0)
	return err
}
