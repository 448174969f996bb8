package simclient_test

// The protocols register themselves (simclient.Register, from their client
// packages' init); this package's tests read udp-lobby scenarios.
import (
	_ "github.com/lobbybench/lobbybench/simclient/levclient"
	_ "github.com/lobbybench/lobbybench/simclient/tcpclient"
	_ "github.com/lobbybench/lobbybench/simclient/udpclient"
)
