package engine

// The simulated clients register themselves with simclient; importing them
// here makes every protocol available to Run.
import (
	_ "github.com/lobbybench/lobbybench/simclient/levclient"
	_ "github.com/lobbybench/lobbybench/simclient/tcpclient"
	_ "github.com/lobbybench/lobbybench/simclient/udpclient"
)
