package result

import (
	"regexp"
	"strings"
)

// ProtocolDocsDir is the folder of the lobbybench repository holding the
// protocol documents that conformance cases cite (Case.Section).
const ProtocolDocsDir = "docs/protocols"

// DocRef is a citation of a section of a protocol document, the form every
// conformance case's Section takes: "udp-lobby.md §5 LOBBY_ROOM_LIST" is
// section §5, titled LOBBY_ROOM_LIST, of docs/protocols/udp-lobby.md.
type DocRef struct {
	// File is the document's file name in ProtocolDocsDir, e.g. "udp-lobby.md".
	File string
	// Section is the section number without "§": "5", "5.1", "A".
	Section string
	// Title is the section's title, "" when the citation gives none.
	Title string
}

var docRefRE = regexp.MustCompile(`^([a-z0-9][a-z0-9-]*\.md) §([0-9A-Z][0-9A-Za-z.]*)(?: (.+))?$`)

// ParseDocRef parses a citation "<file>.md §<section>[ <title>]". It
// returns false for anything else (e.g. the sections of results stored by
// older builds), which reports then show as plain text.
func ParseDocRef(s string) (DocRef, bool) {
	m := docRefRE.FindStringSubmatch(s)
	if m == nil || strings.HasSuffix(m[2], ".") {
		return DocRef{}, false
	}
	return DocRef{File: m[1], Section: m[2], Title: m[3]}, true
}

// Path is the document's path inside the repository,
// "docs/protocols/udp-lobby.md".
func (r DocRef) Path() string { return ProtocolDocsDir + "/" + r.File }

// Anchor is the HTML id the document gives the section: "s5", "s5.1", "sA".
func (r DocRef) Anchor() string { return "s" + r.Section }

// Link is the URL of the section under base, the URL (or path) at which
// the protocol documents are published: base + "/" + File + "#" + Anchor.
// It is "" when base is empty: a report does not guess where the documents
// are.
func (r DocRef) Link(base string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/" + r.File + "#" + r.Anchor()
}
