package scenario

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/script"
	"go.yaml.in/yaml/v3"
)

// CaseFile is a user's own conformance cases (conform --cases FILE): a
// protocol, its own settings (the scenario's protocol keys, udp-lobby's
// header_profile) and cases whose steps are scripted steps, read and
// checked by the loader that reads a scenario's flows, so that a mistake
// reads as a scenario's.
type CaseFile struct {
	File     string
	Protocol ProtocolName
	// Options are the protocol's settings, as a scenario's Plan.Options
	// (nil: its defaults); the catalog's sessions are made of them.
	Options Options
	// KeyLines are the protocol's own keys the file gives, each with its
	// line: a runner's flags give way to them or clash (Options alone
	// cannot tell a key given from its default).
	KeyLines map[string]int
	Cases    []CaseSpec
}

// CaseSpec is one user case.
type CaseSpec struct {
	ID string
	// Level is MUST, SHOULD or MAY (CaseLevels).
	Level       string
	Requirement string
	// Line is where the case starts in the file.
	Line int
	// Steps are its steps as a flow's are: scripted steps and think.
	Steps []Step
	// Block is the steps as one script, in order: what a runner plays
	// (a think is a script.Call whose value is its Step). An expect that
	// gives no within has Within 0: the runner's timeout (WithTimeout).
	Block *script.Block
}

// CaseLevels are the levels a user case may state.
var CaseLevels = []string{"MUST", "SHOULD", "MAY"}

// caseKeys are a case's keys.
var caseKeys = []string{"id", "level", "requirement", "steps"}

// LoadCases reads and checks the case file at path. On any problem it
// returns Errors listing all of them as "file:line: message".
func LoadCases(path string) (*CaseFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCases(path, data)
}

// ParseCases checks the case file in data; file names it in messages.
func ParseCases(file string, data []byte) (cf *CaseFile, err error) {
	d := &decoder{file: file}
	if len(data) > maxFileSize {
		d.errAt(0, "file is %d bytes; a case file is at most %d", len(data), maxFileSize)
		return nil, d.errs
	}
	defer func() {
		if r := recover(); r != nil {
			cf, err = nil, Errors{{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.yamlError(err, data)
		return nil, d.errs
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		d.errAt(0, "empty case file")
		return nil, d.errs
	}
	if !d.checkExpansion(&doc) {
		return nil, d.errs
	}
	cf = d.caseFile(doc.Content[0])
	if len(d.errs) > 0 {
		return nil, d.errs.sorted()
	}
	return cf, nil
}

// caseFile reads the top level: protocol, the protocol's keys, cases.
func (d *decoder) caseFile(root *yaml.Node) *CaseFile {
	cf := &CaseFile{File: d.file}
	f, ok := d.mapping(root, "the case file", append([]string{"protocol", "cases"}, protocolKeys()...))
	if !ok {
		return cf
	}
	n := f.get("protocol")
	if n == nil {
		d.errf(root, "missing key %q (%s)", "protocol", orList(ProtocolNames()))
		return cf
	}
	var p Plan
	d.topProtocol(&p, f, n)
	cf.Protocol = p.Protocol
	if cf.Protocol == "" {
		return cf
	}
	cf.Options = d.protocolOptions(f, cf.Protocol)
	for _, k := range protocolKeys() {
		if n := f.keys[k]; n != nil {
			if cf.KeyLines == nil {
				cf.KeyLines = map[string]int{}
			}
			cf.KeyLines[k] = n.Line
		}
	}
	cs := resolve(f.get("cases"))
	switch {
	case cs == nil:
		d.errf(root, "missing key %q (a list of cases: id, level, requirement, steps)", "cases")
	case cs.Kind != yaml.SequenceNode || len(cs.Content) == 0:
		d.errf(cs, "cases must be a list of cases (id, level, requirement, steps), got %s", describe(cs))
	default:
		seen := map[string]int{}
		for _, cn := range cs.Content {
			if c, ok := d.userCase(cn, cf.Protocol, seen); ok {
				cf.Cases = append(cf.Cases, c)
			}
		}
	}
	return cf
}

// userCase reads one case; seen maps the ids read so far to their lines.
func (d *decoder) userCase(cn *yaml.Node, proto ProtocolName, seen map[string]int) (CaseSpec, bool) {
	f, ok := d.mapping(cn, "a case", caseKeys)
	if !ok {
		return CaseSpec{}, false
	}
	c := CaseSpec{Line: resolve(cn).Line}
	for _, k := range caseKeys {
		if f.get(k) == nil {
			d.errf(cn, "a case: missing key %q", k)
			return c, false
		}
	}
	c.ID, _ = d.str(f.get("id"), "case id")
	what := "case " + c.ID
	if err := checkCaseID(c.ID); err != nil {
		d.errf(f.get("id"), "%s", err)
	} else if at, dup := seen[c.ID]; dup {
		d.errf(f.get("id"), "%s: the id is also line %d's", what, at)
	}
	seen[c.ID] = c.Line
	c.Level, _ = d.oneOf(f.get("level"), what+" level", CaseLevels)
	c.Requirement, _ = d.str(f.get("requirement"), what+" requirement")
	if strings.TrimSpace(c.Requirement) == "" {
		d.errf(f.get("requirement"), "%s: requirement is empty: say in words what the case checks", what)
	}
	// An expect without within waits the runner's timeout (Within 0:
	// conform's --timeout).
	pol := DefaultPolicy
	pol.Timeout = 0
	c.Steps = d.steps(f.get("steps"), what, proto, pol, 1)
	c.Block = d.caseBlock(what, c.Steps)
	return c, true
}

// checkCaseID checks a user case's id: path segments (my/1), as the
// selection patterns read them.
func checkCaseID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("case id is empty")
	case strings.ContainsAny(id, " \t,*?[]\\"):
		return fmt.Errorf("case id %q: no spaces, commas or glob characters (*?[]\\): --cases selects by it", id)
	case slices.Contains(strings.Split(id, "/"), ""):
		return fmt.Errorf("case id %q has an empty segment", id)
	}
	return nil
}

// caseBlock joins a case's steps into one script; a step that is neither
// scripted nor think is an error at its line.
func (d *decoder) caseBlock(what string, steps []Step) *script.Block {
	b := &script.Block{}
	for _, st := range steps {
		if !appendScript(b, st) {
			d.errAt(st.Line, "%s: %s cannot be a case's step (only %s)", what, st.Kind, kindNames(nestable))
		}
	}
	return b
}

// WithTimeout is b with d as the wait of every expect that gives no
// within (Within 0); b is left as it is.
func WithTimeout(b script.Block, d time.Duration) script.Block {
	out := script.Block{Steps: slices.Clone(b.Steps)}
	for i := range out.Steps {
		st := &out.Steps[i]
		switch {
		case st.Expect != nil && st.Expect.Silence == 0 && st.Expect.Within == 0:
			e := *st.Expect
			e.Within = d
			st.Expect = &e
		case st.If != nil:
			s := *st.If
			s.Then, s.Else = WithTimeout(s.Then, d), WithTimeout(s.Else, d)
			st.If = &s
		case st.Repeat != nil:
			r := *st.Repeat
			r.Body = WithTimeout(r.Body, d)
			st.Repeat = &r
		}
	}
	return out
}
