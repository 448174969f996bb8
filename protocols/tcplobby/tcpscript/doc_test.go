package tcpscript_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/script"
)

// TestNamesFromDocument: every message and field is named as
// docs/protocols/tcp-lobby.md names it (fields in lowerCamelCase): a
// message in §2.3's table, a scalar field in its message's layout row or
// in §3.3's structures, a list anywhere in the document.
func TestNamesFromDocument(t *testing.T) {
	b, err := os.ReadFile("../../../docs/protocols/tcp-lobby.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	structs := section(t, doc, "### §3.3", "<a id=\"s4\">")
	for _, m := range cat.Messages() {
		if !regexp.MustCompile(`\| 0x[0-9A-F]{2} \| ` + m.Name + ` \|`).MatchString(doc) {
			t.Errorf("%s is not a type of §2.3", m.Name)
		}
		row := layout(doc, m.Name)
		if row == "" && len(m.Fields) > 0 {
			t.Errorf("%s: no layout row in §5", m.Name)
		}
		for _, f := range m.Fields {
			where := row + structs
			if f.Kind == script.List {
				where = doc
			}
			if !hasWord(where, f.Name) {
				t.Errorf("%s: field %s is not named in its layout or §3.3", m.Name, f.Name)
			}
			for _, e := range f.Elem {
				if !hasWord(structs, e.Name) {
					t.Errorf("%s: %s's field %s is not in §3.3", m.Name, f.Name, e.Name)
				}
			}
		}
	}
}

func section(t *testing.T, doc, from, to string) string {
	i := strings.Index(doc, from)
	j := strings.Index(doc, to)
	if i < 0 || j < i {
		t.Fatalf("no section %q in the document", from)
	}
	return doc[i:j]
}

// layout is the line of §5 that gives name's layout.
func layout(doc, name string) string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| "+name+" 0x") || strings.HasPrefix(line, name+" 0x") {
			return line
		}
	}
	return ""
}

// hasWord reports whether name is a word of s, letter case aside.
func hasWord(s, name string) bool {
	return regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(name) + `\b`).MatchString(s)
}
