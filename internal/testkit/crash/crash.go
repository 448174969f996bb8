// Package crash ends a test's child process the way a C server's failed
// assert does: killed by SIGABRT, every time, without a core file.
package crash

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Abort kills the process with SIGABRT. It puts the signal's default
// action back first, behind the Go runtime's back: with the runtime's own
// handler (GOTRACEBACK=crash), the dump of every thread could itself fault
// and the process then ended by SIGSEGV now and then, so a test that waits
// for "killed by SIGABRT" failed by chance.
func Abort() {
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	// The kernel's struct sigaction, all zero: SIG_DFL, no flags, no mask.
	var act [4]uintptr
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(syscall.SIGABRT), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	syscall.Kill(os.Getpid(), syscall.SIGABRT)
	time.Sleep(10 * time.Second)
	os.Exit(9) // not reached: the signal's default action ends the process
}
