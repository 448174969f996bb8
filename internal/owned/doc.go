// Package owned lets lobbybench own the server under test: with
// --target-cmd 'COMMAND ARGS…' it starts the command (through /bin/sh, in
// its own process group), waits until the protocol's reachability check
// answers, keeps its last lines of output, samples its CPU, memory,
// threads and open files from /proc, and stops it (SIGTERM to the group,
// SIGKILL after a grace period). It also runs the recovery drills a
// scenario's faults schedule: kill and restart, or stop (hang) and
// continue.
//
// Linux first: the process-group handling works on every Unix, the
// /proc telemetry on Linux only; elsewhere Start and the samplers return
// an error saying so.
package owned
