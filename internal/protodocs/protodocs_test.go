// Package protodocs holds only this test: it keeps the protocol documents
// of docs/protocols true to the code. Every conformance case must be listed,
// with its level, in the section its Section cites; every rule id the code
// can report must be in its protocol's document; and every rule a document
// lists in a rule table must exist. A new case or rule without
// documentation fails here.
package protodocs

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// docsDir is docs/protocols seen from this package's directory.
var docsDir = filepath.Join("..", "..", filepath.FromSlash(result.ProtocolDocsDir))

// section is one "§" heading of a document and the text under it, up to
// the next heading of the same or a higher level.
type section struct {
	num, title string
	body       string
	anchored   bool // an <a id="s<num>"></a> stands right above the heading
}

// doc is a parsed protocol document.
type doc struct {
	name     string
	text     string
	sections map[string]*section
}

var headingRE = regexp.MustCompile(`^(#{2,4}) §([0-9A-Z][0-9A-Za-z.]*) (.+)$`)

func parseDoc(name, text string) (*doc, error) {
	d := &doc{name: name, text: text, sections: map[string]*section{}}
	lines := strings.Split(text, "\n")
	type open struct {
		s     *section
		level int
		start int
	}
	var stack []open
	closeTo := func(level, end int) {
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			o := stack[len(stack)-1]
			o.s.body = strings.Join(lines[o.start:end], "\n")
			stack = stack[:len(stack)-1]
		}
	}
	for i, l := range lines {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			if strings.HasPrefix(l, "#") {
				closeTo(strings.IndexFunc(l, func(r rune) bool { return r != '#' }), i)
			}
			continue
		}
		level := len(m[1])
		closeTo(level, i)
		if _, dup := d.sections[m[2]]; dup {
			return nil, fmt.Errorf("%s:%d: section §%s twice", name, i+1, m[2])
		}
		s := &section{num: m[2], title: m[3]}
		s.anchored = i > 0 && lines[i-1] == `<a id="s`+m[2]+`"></a>`
		d.sections[m[2]] = s
		stack = append(stack, open{s, level, i + 1})
	}
	closeTo(0, len(lines))
	return d, nil
}

// loadDocs reads the document of every registered protocol,
// docs/protocols/<name>.md (the file its cases cite), keyed by file name.
func loadDocs(t *testing.T) map[string]*doc {
	t.Helper()
	docs := map[string]*doc{}
	for _, p := range scenario.ProtocolNames() {
		name := p + ".md"
		b, err := os.ReadFile(filepath.Join(docsDir, name))
		if err != nil {
			t.Fatalf("protocol %s: its document: %v", p, err)
		}
		d, err := parseDoc(name, string(b))
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = d
	}
	if len(docs) == 0 {
		t.Fatal("no protocol registered")
	}
	return docs
}

// docOfRule is the document whose rule table lists id, "" when none does;
// more than one is an error.
func docOfRule(docs map[string]*doc, id string) (string, error) {
	var in []string
	for name, d := range docs {
		if ruleRow(d.text, id) != "" {
			in = append(in, name)
		}
	}
	sort.Strings(in)
	if len(in) > 1 {
		return "", fmt.Errorf("rule %s: listed in %s: a rule belongs to one document", id, strings.Join(in, " and "))
	}
	return strings.Join(in, ""), nil
}

// ruleRow finds the rule table row of id ("| `U-CRC` | MUST | …") and
// returns its level, "" when there is none.
func ruleRow(text, id string) string {
	m := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(id) + "` \\| (MUST|SHOULD|INFO) \\|").FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestEverySectionHasAnAnchor(t *testing.T) {
	for name, d := range loadDocs(t) {
		if len(d.sections) == 0 {
			t.Errorf("%s: no § sections", name)
		}
		for num, s := range d.sections {
			if !s.anchored {
				t.Errorf(`%s §%s %s: no <a id="s%s"></a> on the line above the heading`, name, num, s.title, num)
			}
		}
	}
}

// TestCasesAreDocumented: every registered case cites a section of its
// protocol's document that exists under that title, and that section lists
// the case with its level.
func TestCasesAreDocumented(t *testing.T) {
	docs := loadDocs(t)
	cases := conformance.Cases("")
	if len(cases) == 0 {
		t.Fatal("no cases registered")
	}
	for _, c := range cases {
		ref, ok := result.ParseDocRef(c.Section)
		if !ok || ref.Title == "" {
			t.Errorf("%s: Section %q is not a citation \"<file>.md §<n> <title>\"", c.ID, c.Section)
			continue
		}
		if want := c.Protocol + ".md"; ref.File != want {
			t.Errorf("%s: cites %s, want its protocol's document %s", c.ID, ref.File, want)
			continue
		}
		s := docs[ref.File].sections[ref.Section]
		if s == nil {
			t.Errorf("%s: %s has no section §%s (cited as %q)", c.ID, ref.File, ref.Section, c.Section)
			continue
		}
		if s.title != ref.Title {
			t.Errorf("%s: %s §%s is titled %q, the case cites %q", c.ID, ref.File, ref.Section, s.title, ref.Title)
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(c.ID) + "` \\| ([A-Z]+) \\|").FindStringSubmatch(s.body)
		switch {
		case row == nil:
			t.Errorf("%s (%s): not listed in %s §%s (a row \"| `%s` | %s | … |\")", c.ID, c.Desc, ref.File, ref.Section, c.ID, c.Level)
		case row[1] != c.Level.String():
			t.Errorf("%s: %s §%s lists it as %s, the case is %s", c.ID, ref.File, ref.Section, row[1], c.Level)
		}
		for _, r := range strings.Split(c.Rule, ", ") {
			if r != "" && !strings.Contains(docs[ref.File].text, "`"+r+"`") {
				t.Errorf("%s: its rule %s is not in %s", c.ID, r, ref.File)
			}
		}
	}
}

// codeRules returns every rule id the code can report (each registered
// protocol's Rules, and the conformance cases'), with the section its
// package says states it ("" when the package does not say).
func codeRules() map[string]string {
	rules := map[string]string{}
	for _, p := range simclient.Protocols() {
		c, _ := simclient.Describe(p)
		for _, r := range c.Rules {
			rules[r.ID] = r.Section
		}
	}
	for _, c := range conformance.Cases("") {
		for _, r := range strings.Split(c.Rule, ", ") {
			if _, ok := rules[r]; r != "" && !ok {
				rules[r] = ""
			}
		}
	}
	return rules
}

// TestRulesAreDocumented: every rule id has a row, with a level, in a rule
// table of its document, in the section its package names when it names
// one; and every row of a rule table names a rule the code has.
func TestRulesAreDocumented(t *testing.T) {
	docs := loadDocs(t)
	rules := codeRules()
	ids := make([]string, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		name, err := docOfRule(docs, id)
		if err != nil {
			t.Error(err)
			continue
		}
		if name == "" {
			t.Errorf("rule %s: no row \"| `%s` | MUST/SHOULD/INFO | … |\" in a rule table of %s", id, id, strings.Join(slices.Sorted(maps.Keys(docs)), ", "))
			continue
		}
		d := docs[name]
		if sec := rules[id]; sec != "" {
			ref, ok := result.ParseDocRef(sec)
			switch {
			case !ok:
				t.Errorf("rule %s: its Section %q is not \"<file>.md §<n>\"", id, sec)
			case ref.File != name:
				t.Errorf("rule %s: its Section names %s, the rule table that lists it is in %s", id, ref.File, name)
			case d.sections[ref.Section] == nil:
				t.Errorf("rule %s: %s has no §%s", id, name, ref.Section)
			case ruleRow(d.sections[ref.Section].body, id) == "":
				t.Errorf("rule %s: not in the rule table of %s §%s, where its package says it is stated", id, name, ref.Section)
			}
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Z]-[A-Z0-9*-]+)` \\| (?:MUST|SHOULD|INFO) \\|")
	for name, d := range docs {
		for _, m := range row.FindAllStringSubmatch(d.text, -1) {
			if _, ok := rules[m[1]]; !ok {
				t.Errorf("%s lists rule %s, which no code reports", name, m[1])
			}
		}
	}
}

// TestParseDoc checks the heading parser on a small document: nesting,
// anchors and bodies.
func TestParseDoc(t *testing.T) {
	text := strings.Join([]string{
		"# Title",
		`<a id="s1"></a>`,
		"## §1 One",
		"one text",
		"### §1.1 Sub",
		"sub text",
		"## §2 Two",
		"two text",
		"## Not numbered",
		"tail",
	}, "\n")
	d, err := parseDoc("x.md", text)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		num, title string
		anchored   bool
		has, lacks string
	}{
		{"1", "One", true, "sub text", "two text"},
		{"1.1", "Sub", false, "sub text", "two text"},
		{"2", "Two", false, "two text", "tail"},
	} {
		s := d.sections[tt.num]
		if s == nil {
			t.Fatalf("no §%s", tt.num)
		}
		if s.title != tt.title || s.anchored != tt.anchored || !strings.Contains(s.body, tt.has) || strings.Contains(s.body, tt.lacks) {
			t.Errorf("§%s = %+v", tt.num, *s)
		}
	}
	if _, err := parseDoc("x.md", "## §1 A\n## §1 B"); err == nil {
		t.Error("a section given twice was accepted")
	}
}
