package levclient

import (
	"fmt"

	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// disallowHints is what each ServerDisallow reason means (leviathan.md
// §3, §5) and, where the reference server (protocols/leviathan/levserver)
// sends it, its counter (printed as leviathan.disallowed.REASON by serve
// when it stops, by run for the embedded server) and the setting behind it.
var disallowHints = map[lv.DisallowReason]string{
	lv.DisallowUnauthenticated: "JoinServer before the handshake's Authenticate was answered (leviathan.md §3); " +
		"the reference server never sends it (it drops such a request unanswered)",
	lv.DisallowUnsupported: "the server does not support the request (leviathan.md §5); the reference server never sends it",
	lv.DisallowServerFull: "the server holds its most players (leviathan.md §3); the reference server's player limit governs it " +
		"(lobbybench serve --leviathan-max-players, default 4096; the embedded server: embedded_server max_players), " +
		"a player counting from its ServerAllow until its connection closes (leviathan.disallowed.ServerFull in its counters)",
	lv.DisallowServerNotAcceptingPlayers: "the server takes no players now (leviathan.md §3); " +
		"the reference server says it only when configured not to accept (levserver Config.NotAccepting: no flag of lobbybench serve sets it)",
	lv.DisallowNotAuthorized: "not authorized (leviathan.md §5); the reference server answers it to a JoinGame before a successful JoinServer " +
		"(leviathan.disallowed.NotAuthorized in its counters): the flow must join_server first",
	lv.DisallowServerAlreadyConnectedToYou: "this connection has already joined (leviathan.md §3, leviathan/3/6): a second JoinServer " +
		"(leviathan.disallowed.ServerAlreadyConnectedToYou in the reference server's counters)",
	lv.DisallowInvalidParameters: "to a JoinGame the engine says it when it has no valid world to join (leviathan.md §3): a valid refusal; " +
		"the reference server never sends it",
	lv.DisallowServerCustom: "the server's own logic vetoed the player (leviathan.md §3); its message says why; the reference server never sends it",
}

// disallowHint is what ServerDisallow reason r means.
func disallowHint(r lv.DisallowReason) string {
	if h, ok := disallowHints[r]; ok {
		return h
	}
	return "a reason leviathan.md §5 does not define: the server's own (its message says what it means)"
}

// disallowRefusal is the refusal of request by ServerDisallow p, named with
// the server's own words.
func disallowRefusal(request lv.RequestType, p *lv.ServerDisallow) *simclient.Refusal {
	return &simclient.Refusal{
		Request: request.String(),
		Reply:   fmt.Sprintf("ServerDisallow reason %v (%d) %q", p.Reason, uint8(p.Reason), p.Message),
		Hint:    disallowHint(p.Reason),
	}
}
