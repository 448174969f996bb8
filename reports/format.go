package reports

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/lobbybench/lobbybench/result"
)

// Options tune a Format; each reads only what concerns it.
type Options struct {
	HTMLOptions // the HTML page's title and document labels
	// TrimPassingWire leaves a conform result's passing cases' wire logs
	// out of the formats that would otherwise show them in full (HTML and
	// JUnit): conform without --verbose.
	TrimPassingWire bool
}

// Format is one output format. Every command reads the registry
// (Formats): run and conform offer --NAME FILE for each, and `report NAME`
// renders stored results in each format that has a Report.
type Format struct {
	// Name is the flag (--json) and the report subcommand (report html).
	Name string
	// Help is the flag's help for each document kind (KindRun,
	// KindConform), `FILE` quoted as the flag package's placeholder.
	Help map[string]string
	// Write renders docs to w: exactly one document, or with Many several
	// side by side.
	Write func(w io.Writer, o Options, docs ...result.Doc) error
	// Many: Write takes several documents, named by Options.Labels.
	Many bool
	// Report, if set, is the `report NAME` subcommand.
	Report *ReportHelp
}

// ReportHelp describes a format's `report NAME` subcommand.
type ReportHelp struct {
	Summary string // one line, for `report NAME --help`
	Usage   string // the subcommand's usage text
	List    string // its lines in `report --help`'s list of subcommands
}

var formats []Format

// register adds f to the registry: each format's file registers itself
// from init, so a new format is one file.
func register(f Format) { formats = append(formats, f) }

// Formats returns every output format, in registration order (file name
// order, the JSON document first); a format with a capacity renderer
// (reports/capacity_*.go) writes a *Capacity too.
func Formats() []Format {
	out := make([]Format, len(formats))
	for i, f := range formats {
		out[i] = withCapacity(f)
	}
	return out
}

// one adapts single-document renderers to Write: a run is written by run,
// a conform result (trimmed of passing cases' wire logs when asked, if
// trim) by conform.
func one(run func(io.Writer, *result.Run) error, conform func(io.Writer, *result.Conform) error, trim bool) func(io.Writer, Options, ...result.Doc) error {
	return func(w io.Writer, o Options, docs ...result.Doc) error {
		d, err := single(docs)
		if err != nil {
			return err
		}
		if trim {
			d = o.trimmed(d)
		}
		switch d := result.Document(d).(type) {
		case *result.Run:
			return run(w, d)
		case *result.Conform:
			return conform(w, d)
		}
		return fmt.Errorf("reports: document is a %T", d)
	}
}

// trimmed is d without its passing cases' wire logs when o asks for that
// (TrimPassingWire) and d is a conform result; otherwise d itself.
func (o Options) trimmed(d result.Doc) result.Doc {
	if !o.TrimPassingWire || d == nil {
		return d
	}
	if c, ok := result.Document(d).(*result.Conform); ok && c != nil {
		return c.WithoutPassingWire()
	}
	return d
}

// single is the one document of a single-document format.
func single(docs []result.Doc) (result.Doc, error) {
	if len(docs) != 1 {
		return nil, fmt.Errorf("reports: want one document, got %d", len(docs))
	}
	if docs[0] == nil {
		return nil, fmt.Errorf("reports: no document")
	}
	return docs[0], nil
}

func init() {
	register(Format{
		Name: "json",
		Help: map[string]string{
			result.KindRun:     "write the result as JSON to `FILE`",
			result.KindConform: "write the results as JSON to `file`",
		},
		// The document as given: a type embedding a *Run keeps its extra
		// fields.
		Write: func(w io.Writer, _ Options, docs ...result.Doc) error {
			d, err := single(docs)
			if err != nil {
				return err
			}
			return WriteJSON(w, d)
		},
	})
}

// WriteJSON writes v as indented JSON: a result document (a *result.Run,
// *result.Conform, *result.Capacity or a type embedding one) led by its
// headline, status and verdict (result.Stamped), any other value as it is.
func WriteJSON(w io.Writer, v any) error {
	if d, ok := v.(result.Doc); ok && d != nil {
		v = result.Stamped(d)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
