package refserver_test

// The parts register themselves with their protocols' descriptors; this
// package's tests run them.
import _ "github.com/lobbybench/lobbybench/protocols/all"
