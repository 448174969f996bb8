package protodocs_test

// The protocols register themselves (their cases with their groups of the
// suite); this package's tests read them.
import _ "github.com/lobbybench/lobbybench/protocols/all"
