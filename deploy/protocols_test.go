package deploy_test

// The protocols register themselves (simclient.Register, from their client
// packages' init); the overlay test loads a udp-lobby scenario.
import (
	_ "github.com/lobbybench/lobbybench/simclient/levclient"
	_ "github.com/lobbybench/lobbybench/simclient/tcpclient"
	_ "github.com/lobbybench/lobbybench/simclient/udpclient"
)
