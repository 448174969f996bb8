package main

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/scenario"
)

// measure is one client's figures in one run: requests per second and CPU
// time per request.
type measure struct{ rate, cpuPerReq float64 }

// startServe starts `lobbybench serve` (bin) on a free loopback port with
// no rate limit and returns its UDP lobby address and a stop function.
func startServe(bin string) (netip.AddrPort, func(), error) {
	cmd := exec.Command(bin, "serve", "--udp-addr", "127.0.0.1:0", "--base-port", "0", "--tcp-addr", "127.0.0.1:0",
		"--leviathan-addr", "127.0.0.1:0", "--rate-limit", "0", "--leviathan-rate-limit", "0")
	errp, err := cmd.StderrPipe()
	if err != nil {
		return netip.AddrPort{}, nil, err
	}
	stop, err := ownChild(cmd)
	if err != nil {
		return netip.AddrPort{}, nil, fmt.Errorf("%s serve: %v (build it first: make build)", bin, err)
	}
	sc := bufio.NewScanner(errp)
	for sc.Scan() {
		// "lobbybench serve: udp lobby on 127.0.0.1:PORT (...)"
		if rest, ok := strings.CutPrefix(sc.Text(), "lobbybench serve: udp lobby on "); ok {
			a, err := netip.ParseAddrPort(strings.Fields(rest)[0])
			if err != nil {
				stop()
				return netip.AddrPort{}, nil, err
			}
			go func() { // keep draining its stderr
				for sc.Scan() {
				}
			}()
			return a, stop, nil
		}
	}
	stop()
	return netip.AddrPort{}, nil, fmt.Errorf("%s serve printed no UDP lobby address", bin)
}

// lbFlow is one lobbybench contender's flow: steps list_rooms requests
// back to back, as built-in steps or as a scripted send and expect, on a
// socket each or on virtual flows (flows, scenario flows_mode; "":
// sockets).
type lbFlow struct {
	steps    int
	scripted bool
	flows    string
}

// kind names the flow as -cpuprofile-flow does.
func (f lbFlow) kind() string {
	switch {
	case f.flows == string(scenario.FlowsVirtual):
		return "virtual"
	case f.scripted:
		return "scripted"
	}
	return "built-in"
}

// listYAML is a closed loop of n clients each playing f.
func listYAML(n int, f lbFlow, d time.Duration) string {
	step := "list_rooms, "
	if f.scripted {
		step = "{send: LOBBY_LIST_ROOMS}, {expect: {message: LOBBY_ROOM_LIST}}, "
	}
	mode := ""
	if f.flows != "" {
		mode = "flows_mode: " + f.flows + "\n"
	}
	return fmt.Sprintf("protocol: udp-lobby\nseed: 1\n%sload: {model: closed, clients: %d, duration: %s}\nflows:\n  - name: poll\n    steps: [%s]\n",
		mode, n, d, strings.TrimSuffix(strings.Repeat(step, f.steps), ", "))
}

// lobbybenchRun runs lobbybench's closed loop of n clients playing f
// against lobby in this process (the server is in another, so the
// process's CPU time is the harness's).
func lobbybenchRun(n int, f lbFlow, d time.Duration, lobby netip.AddrPort) (measure, error) {
	plan, err := scenario.Parse("benchrun", []byte(listYAML(n, f, d)))
	if err != nil {
		return measure{}, err
	}
	plan.Target = lobby.String()
	runtime.GC()
	profileLobby(f, true)
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan, Grace: 200 * time.Millisecond})
	profileLobby(f, false)
	if err != nil {
		return measure{}, err
	}
	var ok int64
	for _, s := range res.Steps {
		ok += s.Successes
	}
	if ok == 0 || res.DurationNS <= 0 {
		return measure{}, fmt.Errorf("no request succeeded (%d failed)", res.Totals.Failures)
	}
	return measure{rate: float64(ok) / res.DurationNS.Seconds(), cpuPerReq: res.Engine.Harness.CPUSeconds / float64(ok)}, nil
}

// bareMeasure runs bareRun and takes this process's CPU time around it.
func bareMeasure(n int, d time.Duration, lobby netip.AddrPort, connected bool) (measure, error) {
	runtime.GC()
	c0 := cpuNow()
	rate, err := bareRun(n, d, lobby, connected)
	if err != nil || rate == 0 {
		return measure{}, fmt.Errorf("bare client: %v (rate %.0f)", err, rate)
	}
	return measure{rate: rate, cpuPerReq: (cpuNow() - c0) / (rate * d.Seconds())}, nil
}

// pythonRun runs the asyncio client script in a python3 process and takes
// that process's CPU time.
func pythonRun(python, script string, n int, d time.Duration, lobby netip.AddrPort) (measure, error) {
	cmd := exec.Command(python, script, lobby.String(), strconv.Itoa(n), strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		return measure{}, fmt.Errorf("%s %s: %v", python, script, err)
	}
	el := time.Since(start)
	ok, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || ok == 0 {
		return measure{}, fmt.Errorf("python client printed %q", out)
	}
	cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return measure{rate: float64(ok) / min(el.Seconds(), d.Seconds()), cpuPerReq: cpu / float64(ok)}, nil
}

// cpuNow is this process's user+system CPU time in seconds.
func cpuNow() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
