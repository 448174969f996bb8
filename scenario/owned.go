package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/internal/owned"
	"go.yaml.in/yaml/v3"
)

// The keys of a scenario that let lobbybench own the server under test:
// target_cmd starts it (as --target-cmd does) and faults schedule its
// recovery drills. Their rules live in package owned; this file only
// places their errors at file:line.

var faultKeys = []string{"at", "kill", "restart_after", "stop"}

// targetCmd reads target_cmd; the scenario must also say where its server
// answers (target).
func (d *decoder) targetCmd(f fields, hasTarget bool) string {
	n := f.get("target_cmd")
	s, ok := d.str(n, "target_cmd")
	if !ok {
		return ""
	}
	if strings.TrimSpace(s) == "" {
		d.errf(n, "target_cmd is empty (want the command that starts the server, e.g. \"lobbybench serve --udp 127.0.0.1:9000\")")
		return ""
	}
	if !hasTarget {
		d.errf(f.keys["target_cmd"], "target_cmd needs target: the address the started server answers at (e.g. target: 127.0.0.1:9000)")
	}
	return s
}

// faults reads the faults list; runLength is the load's duration (0 when
// it is unknown because of another error).
func (d *decoder) faults(f fields, runLength time.Duration) []owned.Fault {
	n := resolve(f.get("faults"))
	if f.get("target_cmd") == nil {
		d.errf(f.keys["faults"], "faults need target_cmd: lobbybench can kill or stop only a server it started")
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		d.errf(n, "faults must be a list of {at, kill} or {at, stop}, got %s", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errf(n, "faults is empty")
		return nil
	}
	errsBefore := len(d.errs)
	out := make([]owned.Fault, 0, len(n.Content))
	nodes := make([]fields, 0, len(n.Content))
	for i, item := range n.Content {
		what := fmt.Sprintf("faults[%d]", i)
		ff, ok := d.mapping(item, what, faultKeys)
		if !ok {
			continue
		}
		var x owned.Fault
		if v := ff.get("at"); v != nil {
			x.At, _ = d.duration(v, what+".at")
		} else {
			d.errf(item, "%s: missing \"at\" (when, into the run, e.g. at: 20s)", what)
		}
		if v := ff.get("kill"); v != nil {
			if s, ok := d.str(v, what+".kill"); ok {
				sig, err := owned.ParseKillSignal(s)
				if err != nil {
					d.errf(v, "%s.kill: %v", what, err)
				}
				x.Kill = sig
			}
		}
		if v := ff.get("restart_after"); v != nil {
			x.RestartAfter, _ = d.duration(v, what+".restart_after")
		}
		if v := ff.get("stop"); v != nil {
			x.Stop, _ = d.duration(v, what+".stop")
		}
		out = append(out, x)
		nodes = append(nodes, ff)
	}
	if len(d.errs) > errsBefore {
		return nil // the schedule is checked only when every fault reads well
	}
	for _, e := range owned.CheckFaults(out, runLength) {
		at := nodes[e.Index].node
		if v := nodes[e.Index].get(e.Key); v != nil {
			at = v
		}
		d.errf(at, "%s", e.Error())
	}
	return out
}
