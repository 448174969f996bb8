// Package toyecho is a toy protocol for the tests, whole in this one
// package: the proof that a protocol is its own packages plus one line.
// Importing it (blank, as protocols/all imports the real ones) registers
// its descriptor, and lobbybench then speaks it everywhere: a scenario with
// protocol: toy-echo loads (with its own key echo_payload), `run` plays it
// against its embedded server part, `conform` lists and runs its cases,
// `serve` offers its flags. No binary links it: its tests build lobbybench
// with that one import added, and check that no file outside this package
// names it.
//
// The protocol (toy-echo §1 Echo): a request is one UDP datagram, "TOYQ",
// a sequence id (2 bytes, big-endian) and a payload; the server answers it
// with "TOYA", the same id and the same payload, to the address it came
// from, and ignores any other datagram.
package toyecho

import (
	"encoding/binary"
	"flag"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// Name is the protocol's name.
const Name = "toy-echo"

func init() {
	protocols.Register(protocols.Descriptor{
		Scenario: scenario.ProtocolSpec{
			Name: Name, Order: 100, Transport: "udp",
			Steps:         steps,
			ProbeRequests: []scenario.StepKind{Echo},
			Keys:          []string{"echo_payload"},
			Options:       parseOptions,
			Flags:         runFlags,
		},
		Client: simclient.Client{Reach: reach, New: newSession, Rules: rules, Identify: &simclient.Identify{
			Title:   "toy echo",
			Packets: [][]byte{appendRequest(nil, 0xFFFF, []byte("who"))},
			Is:      func(b []byte) bool { _, _, ok := parse(b, replyMagic); return ok },
		}},
		Conformance: &conformance.Group{Transport: "udp", Reach: conformReach, Cases: cases, FaultsIn: "protocols/toyecho"},
		Server:      []*refserver.Part{Part()},
	})
}

// The magic of a request and of a reply.
var (
	requestMagic = [4]byte{'T', 'O', 'Y', 'Q'}
	replyMagic   = [4]byte{'T', 'O', 'Y', 'A'}
)

// appendRequest appends a request with id seq carrying payload to b.
func appendRequest(b []byte, seq uint16, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint16(append(b, requestMagic[:]...), seq), payload...)
}

// appendReply appends the reply to request id seq carrying payload.
func appendReply(b []byte, seq uint16, payload []byte) []byte {
	return append(binary.BigEndian.AppendUint16(append(b, replyMagic[:]...), seq), payload...)
}

// parse reads a datagram of magic: its id and payload.
func parse(b []byte, magic [4]byte) (seq uint16, payload []byte, ok bool) {
	if len(b) < 6 || [4]byte(b[:4]) != magic {
		return 0, nil, false
	}
	return binary.BigEndian.Uint16(b[4:6]), b[6:], true
}

// Options are the toy's own settings of a plan: its key echo_payload.
type Options struct {
	// Payload is what each request carries (default "toy").
	Payload string
}

// Describe adds the payload to the plan's description.
func (o Options) Describe() string { return ", payload " + quoteText(o.Payload) }

// quoteText quotes a payload for a description.
func quoteText(s string) string { return fmt.Sprintf("%q", s) }

// Embedded keeps the options: nothing in them describes only a real target.
func (o Options) Embedded() scenario.Options { return o }

// maxPayload bounds echo_payload (one small datagram).
const maxPayload = 512

// parseOptions reads echo_payload: 1 to maxPayload bytes.
func parseOptions(k *scenario.Keys) scenario.Options {
	o := Options{Payload: "toy"}
	if k.Has("echo_payload") {
		if s, ok := k.String("echo_payload"); ok {
			if err := checkPayload(s); err != nil {
				k.Errorf("echo_payload", "echo_payload: %v", err)
			} else {
				o.Payload = s
			}
		}
	}
	return o
}

func checkPayload(s string) error {
	if len(s) == 0 || len(s) > maxPayload {
		return fmt.Errorf("%d bytes, want 1-%d", len(s), maxPayload)
	}
	return nil
}

// runFlags declares `run --echo-payload`, which overrides echo_payload.
func runFlags(fs *flag.FlagSet) func(scenario.Options) (scenario.Options, error) {
	payload := fs.String("echo-payload", "", "toy-echo: what each request carries (overrides echo_payload)")
	return func(opts scenario.Options) (scenario.Options, error) {
		o, _ := opts.(Options)
		if *payload != "" {
			if err := checkPayload(*payload); err != nil {
				return opts, fmt.Errorf("--echo-payload: %v", err)
			}
			o.Payload = *payload
		}
		return o, nil
	}
}
