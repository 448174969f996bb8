// Command pause is the sandbox ("pause") container of the e2e cluster:
// containerd starts one per pod to hold its namespaces. The cluster is
// offline, so instead of registry.k8s.io/pause it runs this, built locally
// by deploy/e2e/image.sh. It waits for SIGINT or SIGTERM and exits 0, and
// reaps the zombies a PID-namespace-sharing pod leaves behind.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
