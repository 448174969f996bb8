package main

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/scenario"
)

// casesHelp is --cases' help line.
const casesHelp = "comma-separated case `patterns` and case files: a pattern is an id prefix by whole segments (udp-lobby/13) or a glob (udp-lobby/1*, */5/*), the old groups udp and tcp meaning udp-lobby and tcp-lobby; a file (NAME.yaml or .yml) holds your own cases, run beside the selected ones (docs/conform.md#your-own-cases)"

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
