package main

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// Children benchrun starts (the serve target, the memory run's server and
// client processes) must not outlive it, whichever way it ends: a return
// from main, a failure part way (exit), an interrupt, or a SIGKILL (the
// kernel's parent-death signal, where the OS has one).
var (
	exitMu   sync.Mutex
	cleanups []func()
)

// onExit registers f to run, last registered first, before benchrun exits
// through exit or an interrupt.
func onExit(f func()) {
	exitMu.Lock()
	cleanups = append(cleanups, f)
	exitMu.Unlock()
}

// exit runs the registered cleanups and ends the process with code.
func exit(code int) {
	exitMu.Lock()
	fs := cleanups
	cleanups = nil
	exitMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	os.Exit(code)
}

// exitOnInterrupt makes SIGINT and SIGTERM go through exit (code 130).
func exitOnInterrupt() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-c
		exit(130)
	}()
}

// ownChild starts cmd so that it ends with benchrun: it gets the
// parent-death signal (Linux) and a SIGTERM, then is waited for, at exit.
// stop does the same at once; it is safe to call twice.
func ownChild(cmd *exec.Cmd) (stop func(), err error) {
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
	}
	onExit(stop)
	return stop, nil
}
