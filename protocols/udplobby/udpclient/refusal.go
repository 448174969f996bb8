package udpclient

import "github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"

// createRefusedHint is what a LOBBY_JOIN_FAILED answering a create means
// and what governs it: the message carries no reason, so both causes the
// protocol gives are named, with the reference server's counters that
// tell them apart and the settings behind them.
const createRefusedHint = "to a create that means no free instance (the pool is full: udp-lobby.failures.max-instances in the reference server's counters) " +
	"or the creator's address at its room quota (udp-lobby.failures.rooms-per-ip) (udp-lobby.md §10); " +
	"the server's instance limit and how long it keeps an emptied instance govern it " +
	"(lobbybench serve: --max-instances, --cleanup-interval, --max-rooms-per-ip; the embedded server: embedded_server max_instances, cleanup_interval); " +
	"lobbybench describe forecasts the rooms a scenario holds at once"

// joinFailedHint is what a LOBBY_JOIN_FAILED answering req means.
func joinFailedHint(req udpwire.MsgType) string {
	if req == udpwire.LobbyCreateRoom {
		return createRefusedHint
	}
	return "the room is missing, full (seats held for joiners count) or no longer waiting (udp-lobby.md §10)"
}
