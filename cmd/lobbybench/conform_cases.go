package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/scenario"
)

// casesHelp is --cases' help line.
const casesHelp = "comma-separated case `patterns` and case files: a pattern is an id prefix by whole segments (udp-lobby/13) or a glob (udp-lobby/1*, */5/*), the old groups udp and tcp meaning udp-lobby and tcp-lobby; a file (NAME.yaml or .yml) holds your own cases, run beside the selected ones (docs/conform.md#your-own-cases)"

// caseHelp and sectionHelp are --case's and --section's help lines.
const (
	caseHelp    = "comma-separated case `ids`, each exactly (udp-lobby/5/2, or a case file's: my/1): run those, beside what --cases selects"
	sectionHelp = "comma-separated `sections` (udp-lobby/13, leviathan/4): run every case under them, beside what --cases selects"
)

// pick adds --case's ids and --section's sections to cfg's selection,
// each checked against cfg's cases (its protocol's and its case files'):
// an id no case has, or a section no case is under, is an error naming
// it, with the nearest there is.
func (f *conformFlags) pick(cfg *conformance.Config) error {
	var ids, sections []string
	for _, c := range cfg.All() {
		ids = append(ids, c.ID)
		if i := strings.LastIndex(c.ID, "/"); i > 0 && !slices.Contains(sections, c.ID[:i]) {
			sections = append(sections, c.ID[:i])
		}
	}
	for _, id := range listItems(f.caseIDs) {
		id = conformance.CaseID(id)
		if !slices.Contains(ids, id) {
			return fmt.Errorf("--case: no %s case %q%s", cfg.Protocol, id, didYouMean(id, ids, "--list prints them"))
		}
		cfg.IDs = append(cfg.IDs, id)
	}
	for _, sec := range listItems(f.sections) {
		sec = conformance.CaseID(strings.Trim(sec, "/"))
		switch {
		case strings.ContainsAny(sec, "*?[\\"):
			return fmt.Errorf("--section %q: a section is an id's first segments (udp-lobby/13); a glob goes in --cases", sec)
		case !slices.ContainsFunc(ids, func(id string) bool { return conformance.Match(sec, id) }):
			return fmt.Errorf("--section: no %s case is under %q%s", cfg.Protocol, sec, didYouMean(sec, sections, "--list prints the cases"))
		}
		cfg.Patterns = append(cfg.Patterns, sec)
	}
	return nil
}

// listItems splits a comma-separated flag value, leaving out empty items.
func listItems(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// isCaseFile reports whether an item of --cases names a case file.
func isCaseFile(item string) bool {
	item = strings.TrimSpace(item)
	return strings.HasSuffix(item, ".yaml") || strings.HasSuffix(item, ".yml")
}

// splitCases splits --cases into its case files and its patterns (still
// comma-separated, for casePatterns).
func splitCases(cases string) (files []string, patterns string) {
	if cases == "" {
		return nil, ""
	}
	var pats []string
	for _, item := range strings.Split(cases, ",") {
		if isCaseFile(item) {
			files = append(files, strings.TrimSpace(item))
		} else {
			pats = append(pats, item)
		}
	}
	return files, strings.Join(pats, ",")
}

// protocolFlag is --protocol, remembering whether it was given: a case
// file's protocol sets it when it was not.
type protocolFlag struct {
	name *string
	set  *bool
}

func (p protocolFlag) String() string {
	if p.name == nil {
		return ""
	}
	return *p.name
}

func (p protocolFlag) Set(s string) error {
	*p.name, *p.set = s, true
	return nil
}

// loadCases loads the case files of --cases. A file's protocol sets
// --protocol when it was not given, and must be --protocol's when it was
// (or another file's). A problem in a file is every line of it, file:line
// first.
func (f *conformFlags) loadCases(files []string) ([]*scenario.CaseFile, error) {
	var out []*scenario.CaseFile
	for _, path := range files {
		cf, err := scenario.LoadCases(path)
		if err != nil {
			return nil, fmt.Errorf("--cases: %w", err)
		}
		switch {
		case !f.protocolSet:
			f.protocol, f.protocolSet = string(cf.Protocol), true
		case string(cf.Protocol) != f.protocol:
			return nil, fmt.Errorf("--cases: %s: its cases are %s's, and this run's protocol is %s (--protocol, or an earlier case file)", path, cf.Protocol, f.protocol)
		}
		out = append(out, cf)
	}
	return out, nil
}

// userCases makes the loaded case files into cases for this run, each
// file's own settings (udp-lobby's header_profile) settled with the
// protocol's flags in cfg.Options first.
func userCases(cfg *conformance.Config, files []*scenario.CaseFile) error {
	for _, cf := range files {
		var err error
		if cfg.Options, err = conformance.CaseFileOptions(cfg.Protocol, cfg.Options, cf); err != nil {
			return fmt.Errorf("--cases: %w", err)
		}
		cs, err := conformance.UserCases(cf)
		if err != nil {
			return fmt.Errorf("--cases: %w", err)
		}
		cfg.Extra = append(cfg.Extra, cs...)
	}
	return nil
}
