package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CommandLine names a plan built from run's flags (FromFlags): its
// scenario name in every report and the "file" of its messages.
const CommandLine = "(command line)"

// flagFlow is the name of the one flow a command line gives.
const flagFlow = "flow"

// FromFlags builds the plan `run --protocol P --flow STEPS` runs without a
// scenario file: a scenario document is written from the flags and
// validated by Parse, so every default and every check is the file's.
// flow is a comma-separated list of steps, each KIND or KIND=VALUE (the
// step's one value, as a scenario's `- join: created`). The load is o's:
// an absolute --rate is the open model, --clients alone the closed one;
// --duration is needed. The caller applies o to the plan afterwards
// (Plan.Apply) as to a loaded scenario: target, seed, the protocols'
// flags, --clients as the open model's max clients. Errors name the flag.
func FromFlags(protocol, flow string, o Overrides) (*Plan, error) {
	doc, err := flagDocument(protocol, flow, o)
	if err != nil {
		return nil, err
	}
	p, err := Parse(CommandLine, []byte(doc.text()))
	var es Errors
	if errors.As(err, &es) {
		return nil, doc.explain(es, ProtocolName(protocol))
	}
	return p, err
}

// docLine is one line of a scenario written from flags, and the flag(s)
// it came from as given ("--flow", "--rate 500/s --duration 30s").
type docLine struct{ text, flag string }

// flagDoc is a scenario written from flags: its lines, and the step kinds
// its flow gives without a value.
type flagDoc struct {
	lines []docLine
	bare  []string
}

func (d *flagDoc) add(text, flag string) { d.lines = append(d.lines, docLine{text, flag}) }

func (d *flagDoc) text() string {
	var b strings.Builder
	for _, l := range d.lines {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

// quote writes s as a YAML double-quoted scalar: whatever a flag holds
// stays one value (Go's escapes are YAML's).
func quote(s string) string { return strconv.Quote(s) }

// flagDocument writes the scenario the flags say, or says which flag is
// missing or cannot be written.
func flagDocument(protocol, flow string, o Overrides) (*flagDoc, error) {
	if protocol == "" {
		return nil, fmt.Errorf("--protocol is needed to run without a scenario file (%s)", orList(ProtocolNames()))
	}
	if strings.TrimSpace(flow) == "" {
		return nil, fmt.Errorf("--flow is needed to run without a scenario file: its steps, comma-separated (e.g. --flow list_rooms)")
	}
	if o.Duration <= 0 {
		return nil, fmt.Errorf("--duration is needed to run without a scenario file (e.g. --duration 30s)")
	}
	var load, given string
	switch {
	case o.Rate.Scale != 0:
		return nil, fmt.Errorf("--rate %s scales a scenario's rate; without a scenario file give the rate itself (e.g. --rate 500/s)", o.Rate)
	case o.Rate.Absolute != 0:
		load, given = "rate: "+quote(strconv.FormatFloat(o.Rate.Absolute, 'g', -1, 64)+"/s"), "--rate "+o.Rate.String()
	case o.Clients > 0:
		load, given = "clients: "+strconv.Itoa(o.Clients), "--clients "+strconv.Itoa(o.Clients)
	default:
		return nil, fmt.Errorf("--rate N/s (open model: N new sessions a second) or --clients N (closed model: N clients) is needed to run without a scenario file")
	}
	d := &flagDoc{}
	d.add("name: "+quote(CommandLine), "")
	d.add("protocol: "+quote(protocol), "--protocol")
	// One line: the decoder's errors on the load, at its mapping or at a
	// key, name the flags that made it.
	d.add(fmt.Sprintf("load: {%s, duration: %s}", load, quote(o.Duration.String())), given+" --duration "+o.Duration.String())
	d.add("flows:", "")
	d.add("  - name: "+flagFlow, "")
	d.add("    steps:", "--flow")
	for i, s := range strings.Split(flow, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, fmt.Errorf("--flow %q: step %d is empty", flow, i+1)
		}
		kind, value, hasValue := strings.Cut(s, "=")
		kind = strings.TrimSpace(kind)
		line := "      - " + quote(kind)
		if hasValue {
			line += ": " + quote(strings.TrimSpace(value))
		} else {
			d.bare = append(d.bare, kind)
		}
		d.add(line, "--flow")
	}
	return d, nil
}

// explain turns the decoder's errors on a scenario written from flags
// into the flags' own: each names the flag its line came from, and a step
// given bare that needs more says which steps cannot run bare.
func (d *flagDoc) explain(es Errors, proto ProtocolName) error {
	var msgs []string
	for _, e := range es {
		flag := ""
		if e.Line >= 1 && e.Line <= len(d.lines) {
			flag = d.lines[e.Line-1].flag
		}
		msg := strings.TrimPrefix(e.Msg, fmt.Sprintf("flow %q: ", flagFlow))
		if flag != "" {
			msg = flag + ": " + strings.TrimPrefix(msg, strings.TrimPrefix(flag, "--")+": ")
		}
		msgs = append(msgs, msg)
	}
	need := bareless(proto)
	var bare []string
	for _, k := range d.bare {
		if slices.Contains(need, k) && !slices.Contains(bare, k) {
			bare = append(bare, k)
		}
	}
	if len(bare) > 0 {
		msgs = append(msgs, fmt.Sprintf("--flow: %s cannot run bare (%s steps that cannot: %s): give a step's one value as KIND=VALUE (think=100ms), or write a scenario file (docs/scenario.md)",
			strings.Join(bare, ", "), proto, strings.Join(need, ", ")))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// bareless lists the step kinds of p that a flow of that one step, bare,
// does not validate (a think needs its time, a barrier a group): asked of
// the decoder itself, so the list is always its.
func bareless(p ProtocolName) []string {
	if _, ok := LookupProtocol(p); !ok {
		return nil
	}
	var out []string
	for _, k := range StepKinds(p) {
		doc := fmt.Sprintf("protocol: %s\nload: {rate: 1/s, duration: 1s}\nflows: [{steps: [%s]}]\n", quote(string(p)), quote(string(k)))
		if _, err := Parse(CommandLine, []byte(doc)); err != nil {
			out = append(out, string(k))
		}
	}
	return out
}
