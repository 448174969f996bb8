package reports

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/result"
)

// parsed JUnit, read back independently of the writer's own types.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func parseJUnit(t *testing.T, data []byte) xSuites {
	t.Helper()
	var s xSuites
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	if err := d.Decode(&s); err != nil {
		t.Fatalf("invalid JUnit XML: %v\n%s", err, data)
	}
	// the counts in attributes must agree with the elements
	var tests, fails, skips int
	for _, su := range s.Suites {
		var f, sk int
		for _, c := range su.Cases {
			if c.Error != nil {
				t.Errorf("case %q uses <error>; failures must be <failure>", c.Name)
			}
			if c.Failure != nil {
				f++
			}
			if c.Skipped != nil {
				sk++
			}
			if c.Failure != nil && c.Skipped != nil {
				t.Errorf("case %q both failed and skipped", c.Name)
			}
		}
		if su.Tests != len(su.Cases) || su.Failures != f || su.Skipped != sk {
			t.Errorf("suite %s says tests=%d failures=%d skipped=%d, has %d/%d/%d", su.Name, su.Tests, su.Failures, su.Skipped, len(su.Cases), f, sk)
		}
		tests, fails, skips = tests+len(su.Cases), fails+f, skips+sk
	}
	if s.Tests != tests || s.Failures != fails || s.Skipped != skips || s.Errors != 0 {
		t.Errorf("testsuites says %d/%d/%d/%d, has %d/%d/%d", s.Tests, s.Failures, s.Skipped, s.Errors, tests, fails, skips)
	}
	return s
}

func TestConformJUnitValid(t *testing.T) {
	c := sampleConform()
	// hostile text: CDATA terminator, NUL, invalid UTF-8, markup
	c.Cases[1].Actual = "got ]]> and \x00 and \xff <b>"
	c.Cases[0].Wire = append(c.Cases[0].Wire, result.WireEntry{Dir: result.DirRecv, OffsetNS: time.Millisecond, Hex: "]]>"})
	var b bytes.Buffer
	if err := WriteConformJUnit(&b, c); err != nil {
		t.Fatal(err)
	}
	s := parseJUnit(t, b.Bytes())
	if len(s.Suites) != 1 || len(s.Suites[0].Cases) != len(c.Cases) {
		t.Fatalf("want one suite with %d cases, got %+v", len(c.Cases), s)
	}
	byVerdict := map[string]string{}
	for i, k := range c.Cases {
		x := s.Suites[0].Cases[i]
		if !strings.HasPrefix(x.Name, k.ID+" ") {
			t.Errorf("case %d name %q does not start with id %q", i, x.Name, k.ID)
		}
		switch {
		case x.Failure != nil:
			byVerdict[k.Verdict] = "failure"
		case x.Skipped != nil:
			byVerdict[k.Verdict] = "skipped"
		default:
			byVerdict[k.Verdict] = "passed"
		}
	}
	want := map[string]string{result.VerdictPass: "passed", result.VerdictFail: "failure", result.VerdictWarn: "passed", result.VerdictInfo: "passed", result.VerdictSkip: "skipped"}
	for v, w := range want {
		if byVerdict[v] != w {
			t.Errorf("verdict %s rendered as %s, want %s", v, byVerdict[v], w)
		}
	}
	f := s.Suites[0].Cases[1].Failure
	if f == nil || !strings.Contains(f.Text, "got ]]> and") || f.Type != result.LevelMust {
		t.Errorf("failure text lost the CDATA terminator or level: %+v", f)
	}
	if !strings.Contains(s.Suites[0].Cases[0].SystemOut, "<- +1ms ]]>") {
		t.Errorf("wire log lost: %q", s.Suites[0].Cases[0].SystemOut)
	}
}

func TestRunJUnitValid(t *testing.T) {
	run := sampleRun(t)
	var b bytes.Buffer
	if err := WriteRunJUnit(&b, run); err != nil {
		t.Fatal(err)
	}
	s := parseJUnit(t, b.Bytes())
	if s.Tests != len(run.Thresholds)+len(run.Violations) {
		t.Errorf("tests = %d, want one per threshold and violated rule (%d)", s.Tests, len(run.Thresholds)+len(run.Violations))
	}
	if s.Failures != 2 { // one failed threshold, one violated rule
		t.Errorf("failures = %d, want 2", s.Failures)
	}
}
