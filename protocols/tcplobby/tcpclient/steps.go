package tcpclient

import (
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
)

// The TCP lobby's own step kinds (its others are stepkit's).
const (
	Start         scenario.StepKind = "start"
	WaitCountdown scenario.StepKind = "wait_countdown"
)

// steps are the step kinds a TCP lobby flow takes.
var steps = []scenario.StepSpec{
	stepkit.ConnectSpec, stepkit.ListRoomsSpec, stepkit.CreateNamedRoomSpec, stepkit.JoinSpec, stepkit.ReadySpec,
	{Kind: Start, Request: true},
	{Kind: WaitCountdown, Wait: true, Shorthand: "timeout"},
	stepkit.WaitGameStartSpec, stepkit.DisconnectSpec,
}
