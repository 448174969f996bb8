package tcpclient_test

// The protocols register themselves; this package's tests use them.
import _ "github.com/lobbybench/lobbybench/protocols/all"
