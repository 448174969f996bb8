package reports

import (
	"fmt"
	"net/url"
	"strings"
)

// CheckDocsBase returns an error when base cannot serve as
// HTMLOptions.DocsBase: it must be an http, https or file URL, or a path,
// with no query or fragment (the section's anchor is appended).
func CheckDocsBase(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%q is not a URL or path: %v", base, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https", "file":
	default:
		return fmt.Errorf("%q: scheme %q is not http, https or file", base, u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(base, "?#") {
		return fmt.Errorf("%q has a query or fragment; the section anchor is appended to it", base)
	}
	return nil
}
