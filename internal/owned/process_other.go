//go:build !unix

package owned

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"
)

// Only Unix has process groups and SIGSTOP; these exist so the package
// builds, and supported() keeps Start from getting to them.
var (
	sigTerm os.Signal = os.Kill
	sigKill os.Signal = os.Kill
	sigStop os.Signal = os.Kill
	sigCont os.Signal = os.Kill
)

func supported() error {
	return fmt.Errorf("--target-cmd: starting and watching the target is %w (%s); start the server yourself and give --target", ErrUnsupported, runtime.GOOS)
}

func setGroup(*exec.Cmd) {}

func signalGroup(int, os.Signal) error { return supported() }

func exitInfo(ps *os.ProcessState) (string, int, time.Duration) {
	if ps == nil {
		return "", -1, 0
	}
	return fmt.Sprintf("exited with status %d", ps.ExitCode()), ps.ExitCode(), ps.UserTime() + ps.SystemTime()
}
