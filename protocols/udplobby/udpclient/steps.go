package udpclient

import (
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
)

// The UDP lobby's own step kinds (its others are stepkit's).
const (
	Hello        scenario.StepKind = "hello"
	InstanceJoin scenario.StepKind = "instance_join"
	Ping         scenario.StepKind = "ping"
	Leave        scenario.StepKind = "leave"
)

// steps are the step kinds a UDP lobby flow takes. Its rooms have no
// name: its create_room takes none.
var steps = []scenario.StepSpec{
	stepkit.ListRoomsSpec, stepkit.CreateRoomSpec, stepkit.JoinSpec,
	{Kind: Hello, Request: true},
	{Kind: InstanceJoin, Request: true},
	stepkit.ReadySpec,
	stepkit.SeriesSpec(Ping),
	stepkit.WaitGameStartSpec,
	{Kind: Leave, Params: []string{"reason"}, Parse: parseLeave},
	stepkit.DisconnectSpec,
}

// LeaveParams are a leave's parameters: the CLIENT_DISCONNECT reason.
type LeaveParams struct{ Reason uint8 }

// parseLeave reads a leave's reason, 0-255 (0 unless given).
func parseLeave(k *scenario.StepKeys) any {
	var p LeaveParams
	if k.Has("reason") {
		r, _ := k.Int("reason", 0, 255)
		p.Reason = uint8(r)
	}
	return p
}
