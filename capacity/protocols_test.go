package capacity_test

// The protocols register themselves; this package's tests run them.
import _ "github.com/lobbybench/lobbybench/protocols/all"
