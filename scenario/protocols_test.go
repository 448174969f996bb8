package scenario_test

// The protocols register themselves (simclient.Register, from their client
// packages' init); the loader's tests read scenarios of all three.
import (
	_ "github.com/lobbybench/lobbybench/simclient/levclient"
	_ "github.com/lobbybench/lobbybench/simclient/tcpclient"
	_ "github.com/lobbybench/lobbybench/simclient/udpclient"
)
