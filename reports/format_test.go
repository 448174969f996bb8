package reports

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// extended is a document with extra fields, as engine.Result embeds a
// *Run: every format takes it as its run, and the JSON keeps the extras.
type extended struct {
	*result.Run
	Extra string `json:"extra"`
}

// TestFormats: the registry holds each format once, the four of today in
// the order the commands list them, each with its flag help for both kinds
// of result; each of those writes a document exactly as its renderer does
// (a conform result trimmed of passing wire logs in HTML and JUnit when
// asked, never in JSON or Markdown); every format refuses a nil document
// and, unless Many, two.
func TestFormats(t *testing.T) {
	var names []string
	seen := map[string]bool{}
	for _, f := range Formats() {
		if seen[f.Name] {
			t.Errorf("format %s registered twice", f.Name)
		}
		seen[f.Name] = true
		if slices.Contains([]string{"json", "html", "junit", "markdown"}, f.Name) {
			names = append(names, f.Name)
		}
		for _, k := range []string{result.KindRun, result.KindConform} {
			if !strings.Contains(f.Help[k], "`") {
				t.Errorf("%s: help for %s %q names no placeholder", f.Name, k, f.Help[k])
			}
		}
	}
	if got := strings.Join(names, " "); got != "json html junit markdown" {
		t.Errorf("formats %q", got)
	}
	run, conf := sampleRun(t), sampleConform()
	conf.Cases[0].Wire = []result.WireEntry{{Dir: result.DirSent, Hex: "0102"}}
	if conf.Cases[0].Verdict != result.VerdictPass {
		t.Fatal("fixture: case 0 no longer passes")
	}
	slim := conf.WithoutPassingWire()
	render := func(f func(io.Writer) error) string {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	html := func(d result.Doc) func(io.Writer) error {
		return func(w io.Writer) error { return WriteHTML(w, HTMLOptions{Title: "T"}, d) }
	}
	want := map[string][3]func(io.Writer) error{ // run, conform, trimmed conform
		"json":     {func(w io.Writer) error { return WriteJSON(w, run) }, func(w io.Writer) error { return WriteJSON(w, conf) }, func(w io.Writer) error { return WriteJSON(w, conf) }},
		"html":     {html(run), html(conf), html(slim)},
		"junit":    {func(w io.Writer) error { return WriteRunJUnit(w, run) }, func(w io.Writer) error { return WriteConformJUnit(w, conf) }, func(w io.Writer) error { return WriteConformJUnit(w, slim) }},
		"markdown": {func(w io.Writer) error { return WriteRunMarkdown(w, run) }, func(w io.Writer) error { return WriteConformMarkdown(w, conf) }, func(w io.Writer) error { return WriteConformMarkdown(w, conf) }},
	}
	for _, f := range Formats() {
		opts := Options{HTMLOptions: HTMLOptions{Title: "T"}}
		if !f.Many {
			if err := f.Write(io.Discard, opts, run, run); err == nil {
				t.Errorf("format %s took two documents", f.Name)
			}
		}
		if err := f.Write(io.Discard, opts, nil); err == nil {
			t.Errorf("format %s took a nil document", f.Name)
		}
		w, ok := want[f.Name]
		if !ok {
			continue // a newer format: its own golden test holds its bytes
		}
		trim := opts
		trim.TrimPassingWire = true
		for i, tc := range []struct {
			d result.Doc
			o Options
		}{{run, opts}, {conf, opts}, {conf, trim}} {
			got := render(func(out io.Writer) error { return f.Write(out, tc.o, tc.d) })
			if got != render(w[i]) {
				t.Errorf("format %s, case %d: output differs from its renderer's", f.Name, i)
			}
		}
		ext := render(func(out io.Writer) error { return f.Write(out, opts, extended{run, "x"}) })
		if f.Name == "json" {
			if !strings.Contains(ext, `"extra": "x"`) {
				t.Errorf("json dropped an embedding document's field")
			}
		} else if ext != render(w[0]) {
			t.Errorf("format %s: an embedding document is not written as its run", f.Name)
		}
	}
	if conf.Cases[0].Wire == nil {
		t.Error("trimming changed the caller's document")
	}
}
