//go:build unix

package owned

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var (
	sigTerm os.Signal = syscall.SIGTERM
	sigKill os.Signal = syscall.SIGKILL
	sigStop os.Signal = syscall.SIGSTOP
	sigCont os.Signal = syscall.SIGCONT
)

func supported() error { return nil }

// setGroup puts the command in a process group of its own, so signals
// reach the server and its children and nothing else.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("cannot send %v", sig)
	}
	if err := syscall.Kill(-pid, s); err != nil {
		return fmt.Errorf("send %s to process group %d: %w", unix.SignalName(s), pid, err)
	}
	return nil
}

// exitInfo describes how a process ended, its exit status (-1 when a
// signal ended it) and the CPU time it used.
func exitInfo(ps *os.ProcessState) (string, int, time.Duration) {
	if ps == nil {
		return "", -1, 0
	}
	var cpu time.Duration
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ps.String(), ps.ExitCode(), cpu
	}
	words, code := waitWords(ws)
	return words, code, cpu
}

func waitWords(ws syscall.WaitStatus) (string, int) {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exited with status %d", ws.ExitStatus()), ws.ExitStatus()
	case ws.Signaled():
		s := "killed by " + signalName(ws.Signal())
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s, -1
	}
	return fmt.Sprintf("ended with wait status %#x", uint32(ws)), -1
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}
