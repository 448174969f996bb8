package scenario

import (
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxExpandedNodes bounds the YAML nodes of a scenario once its aliases are
// expanded. The file cap (maxFileSize) bounds the text, not what an alias
// repeats: one anchored list of steps reused by every flow multiplies, and
// every copy becomes a Step in the plan. The bound is what a file at the cap
// could hold with no alias at all, two bytes a node ("[a,a,a,…]"), so an
// alias never lets a scenario grow past what its text could have said: the
// plan stays within the memory a 1 MiB scenario already needs.
const maxExpandedNodes = maxFileSize / 2

// expansion counts a document's nodes with every alias expanded, without
// expanding anything: an anchored node's expanded size is computed once and
// remembered, so the count costs one walk over the document as written,
// however far its aliases would multiply. Sizes saturate just above limit.
type expansion struct {
	limit int
	size  map[*yaml.Node]int  // expanded size of an anchored node, once known
	open  map[*yaml.Node]bool // anchored nodes being counted (an alias to one is a cycle)
	total int                 // nodes so far, in document order
}

// checkExpansion reports, at the alias that crosses it, a document that
// aliases expand beyond maxExpandedNodes, or whose alias refers to the value
// it is part of (an infinite document). It reports false when the document
// must not be decoded.
func (d *decoder) checkExpansion(doc *yaml.Node) bool {
	e := &expansion{limit: maxExpandedNodes, size: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	return e.walk(d, doc)
}

// walk adds n's expanded nodes to the running total, in document order, and
// reports the first alias that is cyclic or takes the total over the limit.
func (e *expansion) walk(d *decoder, n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		size, ok := e.expanded(n.Alias)
		if !ok {
			d.errf(n, "alias *%s is inside the value of &%s it names: the document would never end", n.Value, n.Value)
			return false
		}
		e.total += size
		if e.total > e.limit {
			d.errf(n, "alias *%s (%s nodes) takes the scenario over %d YAML nodes with its aliases expanded; a scenario is at most that, as its 1 MiB file could hold without aliases", n.Value, nodeCount(size, e.limit), e.limit)
			return false
		}
		return true
	}
	if n.Anchor != "" {
		e.open[n] = true
		defer delete(e.open, n)
	}
	e.total++ // text alone: the file cap bounds it; only an alias is refused
	for _, c := range n.Content {
		if !e.walk(d, c) {
			return false
		}
	}
	return true
}

// expanded is n's size with its aliases expanded, saturating at limit+1;
// false if n contains an alias to a node being counted.
func (e *expansion) expanded(n *yaml.Node) (int, bool) {
	if n == nil {
		return 0, true
	}
	if n.Kind == yaml.AliasNode {
		return e.expanded(n.Alias)
	}
	if e.open[n] {
		return 0, false
	}
	if s, ok := e.size[n]; ok {
		return s, true
	}
	e.open[n] = true
	defer delete(e.open, n)
	s := 1
	for _, c := range n.Content {
		cs, ok := e.expanded(c)
		if !ok {
			return 0, false
		}
		s = min(s+cs, e.limit+1)
	}
	e.size[n] = s
	return s, true
}

// nodeCount writes a saturated size: "over N" when it reached the cap.
func nodeCount(size, limit int) string {
	if size > limit {
		return "over " + strconv.Itoa(limit)
	}
	return strconv.Itoa(size)
}
