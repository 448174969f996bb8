package levclient

import (
	"github.com/lobbybench/lobbybench/protocols/stepkit"
	"github.com/lobbybench/lobbybench/scenario"
)

// Leviathan's own step kinds (its others are stepkit's).
const (
	JoinServer scenario.StepKind = "join_server"
	JoinGame   scenario.StepKind = "join_game"
	Echo       scenario.StepKind = "echo"
	Status     scenario.StepKind = "status"
)

// steps are the step kinds a Leviathan flow takes.
var steps = []scenario.StepSpec{
	stepkit.ConnectSpec,
	{Kind: JoinServer, Request: true},
	{Kind: JoinGame, Request: true, Params: []string{"options"}, Parse: parseJoinGame},
	stepkit.SeriesSpec(Echo),
	{Kind: Status, Request: true},
	stepkit.DisconnectSpec,
}

// JoinGameParams are a join_game's parameters: the options string it sends.
type JoinGameParams struct{ Options string }

// parseJoinGame reads a join_game's options ("" unless given).
func parseJoinGame(k *scenario.StepKeys) any {
	var p JoinGameParams
	if k.Has("options") {
		p.Options, _ = k.String("options")
	}
	return p
}

// joinGameOptions is the options string of a join_game step.
func joinGameOptions(st *scenario.Step) string {
	p, _ := st.Params.(JoinGameParams)
	return p.Options
}
