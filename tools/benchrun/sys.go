package main

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func runtimeGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }

func notify(c chan os.Signal) { signal.Notify(c, syscall.SIGTERM, os.Interrupt) }
