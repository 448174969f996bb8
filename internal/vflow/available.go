//go:build linux

package vflow

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// Capability numbers (linux/capability.h).
const (
	capNetAdmin = 12
	capNetRaw   = 13
	capSysAdmin = 21
	capBPF      = 39
)

// capability is one privilege vflow needs and what it is for.
type capability struct {
	bit  uint
	name string // CAP_NET_RAW
	for_ string
}

var (
	needNetRaw   = capability{capNetRaw, "CAP_NET_RAW", "the raw socket that sends the flows' datagrams"}
	needBPF      = capability{capBPF, "CAP_BPF", "the SOCKMAP and the sk_lookup program"}
	needNetAdmin = capability{capNetAdmin, "CAP_NET_ADMIN", "loading the sk_lookup program and attaching it to the network namespace"}
	needed       = []capability{needNetRaw, needBPF, needNetAdmin}
)

// ContainerCapabilities names the capabilities as a container's
// securityContext.capabilities.add takes them (without CAP_).
func ContainerCapabilities() []string {
	names := make([]string, len(needed))
	for i, c := range needed {
		names[i] = strings.TrimPrefix(c.name, "CAP_")
	}
	return names
}

// grant is how to give a program the capabilities: the one text every
// privilege error ends with.
const grant = "run as root, or grant them to the binary with " +
	"`setcap cap_net_raw,cap_bpf,cap_net_admin+ep <binary>`, or in a container add " +
	"NET_RAW, BPF and NET_ADMIN to securityContext.capabilities.add and run it as uid 0 " +
	"(runAsUser: 0; a user other than root drops them when its program starts)"

// PrivilegeError says which capabilities a step lacked.
type PrivilegeError struct {
	Step    string // what was refused: "attach the sk_lookup program"
	Missing []string
	Err     error // the kernel's refusal, nil when read from the capability set
}

func (e *PrivilegeError) Error() string {
	s := fmt.Sprintf("vflow: %s needs %s", e.Step, strings.Join(e.Missing, " and "))
	if e.Err != nil {
		s += fmt.Sprintf(" (the kernel said: %v)", e.Err)
	}
	return s + "; " + grant
}

func (e *PrivilegeError) Unwrap() error { return e.Err }

// system is what Available and Open ask of the kernel; tests replace parts
// to fake a refusal.
type system struct {
	capEff func() (uint64, error)
	probe  func() error // nil when the kernel has sk_lookup programs
	attach func(netns int, p *ebpf.Program) (closer, error)
}

type closer interface{ Close() error }

var linux = system{capEff: readCapEff, probe: probeSkLookup, attach: attachNetNs}

// Available says whether this process can open virtual flows: which
// capability is missing and how to grant it, or that the kernel has no
// sk_lookup programs. nil means Open should succeed.
func Available() error { return linux.available() }

func (s system) available() error {
	eff, err := s.capEff()
	if err != nil {
		return fmt.Errorf("vflow: reading this process's capabilities: %w", err)
	}
	var missing []string
	for _, c := range needed {
		has := eff&(1<<c.bit) != 0
		if c.bit == capBPF && eff&(1<<capSysAdmin) != 0 {
			has = true // CAP_SYS_ADMIN still allows bpf()
		}
		if !has {
			missing = append(missing, c.name+" ("+c.for_+")")
		}
	}
	if len(missing) > 0 {
		return &PrivilegeError{Step: "opening virtual flows", Missing: missing}
	}
	if err := s.probe(); err != nil {
		if errors.Is(err, ebpf.ErrNotSupported) {
			return fmt.Errorf("vflow: the kernel (%s) has no BPF sk_lookup programs, which need Linux 5.9 or later: %w", kernelRelease(), err)
		}
		return refused("loading a BPF sk_lookup program", err, needBPF, needNetAdmin)
	}
	return nil
}

// refused turns a kernel's EPERM/EACCES into a PrivilegeError naming the
// capabilities step needs; other errors keep their own words.
func refused(step string, err error, caps ...capability) error {
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) {
		return fmt.Errorf("vflow: %s: %w", step, err)
	}
	names := make([]string, len(caps))
	for i, c := range caps {
		names[i] = c.name + " (" + c.for_ + ")"
	}
	return &PrivilegeError{Step: step, Missing: names, Err: err}
}

func probeSkLookup() error { return features.HaveProgramType(ebpf.SkLookup) }

// readCapEff reads the effective capability set of this process.
func readCapEff() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/self/status has no CapEff line")
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "unknown release"
	}
	return unix.ByteSliceToString(u.Release[:])
}
