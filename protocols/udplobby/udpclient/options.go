package udpclient

import (
	"flag"
	"fmt"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/scenario"
)

// Options are the UDP lobby's own settings of a plan (scenario.Plan.Options),
// parsed from its keys header_profile and instance_ports.
type Options struct {
	// HeaderProfile is "spec" (the default), "rtype17" or "auto" (guess
	// from the first reply; the reachability check settles it).
	HeaderProfile string
	// InstancePorts is the range the ports of the target's game instances
	// must fall in; zero: unknown.
	InstancePorts scenario.PortRange
}

// OptionsOf returns the UDP lobby options of plan (the zero Options when it
// has none: header spec, instance ports unknown).
func OptionsOf(plan *scenario.Plan) Options {
	o, _ := plan.Options.(Options)
	return o
}

// Describe adds the header profile and the instance ports to the plan's
// description.
func (o Options) Describe() string {
	s := ""
	if o.HeaderProfile != "" {
		s += ", header " + o.HeaderProfile
	}
	if !o.InstancePorts.IsZero() {
		s += fmt.Sprintf(", instance ports %d-%d", o.InstancePorts.First, o.InstancePorts.Last)
	}
	return s
}

// Embedded drops the instance ports: they describe the scenario's target,
// and the embedded server's instances take whatever ports are free.
func (o Options) Embedded() scenario.Options {
	o.InstancePorts = scenario.PortRange{}
	return o
}

// keys are the UDP lobby's own top-level scenario keys.
var keys = []string{"header_profile", "instance_ports"}

// parseOptions reads header_profile (default spec) and instance_ports.
func parseOptions(k *scenario.Keys) scenario.Options {
	o := Options{}
	if k.Has("header_profile") {
		o.HeaderProfile, _ = k.OneOf("header_profile", []string{"spec", "rtype17", "auto"})
	}
	if o.HeaderProfile == "" {
		o.HeaderProfile = "spec"
	}
	if k.Has("instance_ports") {
		if s, ok := k.String("instance_ports"); ok {
			r, err := netrange.ParsePorts(s)
			if err != nil {
				k.Errorf("instance_ports", "instance_ports: %v", err)
			}
			o.InstancePorts = r
		}
	}
	return o
}

// flags declares `run --instance-ports`, which overrides instance_ports
// (parsed by netrange.ParsePorts as the key and conform's flag are).
func flags(fs *flag.FlagSet) func(scenario.Options) (scenario.Options, error) {
	ports := fs.String("instance-ports", "", "udp-lobby: the target's game-instance port `range` LO-HI a returned port must fall in (overrides instance_ports)")
	return func(opts scenario.Options) (scenario.Options, error) {
		o, _ := opts.(Options)
		if *ports != "" {
			r, err := netrange.ParsePorts(*ports)
			if err != nil {
				return opts, fmt.Errorf("--instance-ports: %v", err)
			}
			o.InstancePorts = r
		}
		return o, nil
	}
}
