//go:build !linux

package main

import (
	"errors"
	"net/netip"
	"time"
)

type refResult struct {
	p50, p99, uncorrP50 int64
	kernelP50           int64
	lagP50, lagP99      int64
	err                 error
}

func runReference(netip.AddrPort, int, time.Duration) refResult {
	return refResult{err: errors.New("the blocking reference client is Linux-only")}
}

func cpuSeconds() float64 { return 0 }

func stolen() (time.Duration, bool) { return 0, false }
