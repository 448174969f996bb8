package levserver

import "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"

// closeReason is why the endpoint ended a connection (Stats.Closes).
type closeReason uint8

const (
	closeByPeer    closeReason = iota // CloseConnection received
	closeIdle                         // no Ln packet for the engine's idle timeout
	closeHandshake                    // not authenticated within HandshakeTimeout
	closeCritical                     // a Critical message lost (Conn.CloseOnCriticalLoss)
	closeShutdown                     // Server.Close
	closeRestarted                    // a new client's first Connect from the same address
	numCloseReasons
)

var closeNames = [numCloseReasons]string{"close-connection", "idle-timeout", "handshake-timeout", "critical-lost", "shutdown", "restarted"}

// counters are guarded by Server.mu (all protocol work happens under it).
type counters struct {
	datagramsIn, datagramsOut uint64
	writeErrors               uint64
	connsOpened               uint64
	playersJoined             uint64
	requests                  [32]uint64 // acted-on requests by type (index 31: other)
	responses                 [32]uint64 // responses sent (first transmissions) by type
	disallowed                [8]uint64
	drops                     map[string]uint64
	closes                    [numCloseReasons]uint64
	resends, duplicates       uint64
	confirmed, lost           uint64
	ackReadingMismatch        uint64
	verified                  uint64
}

func (c *counters) drop(reason string) { c.drops[reason]++ }

// Stats is a snapshot of a Server's counters. Maps hold only non-zero
// entries.
type Stats struct {
	DatagramsIn, DatagramsOut uint64
	WriteErrors               uint64
	ConnsOpened               uint64 // connections created (first datagram with a Connect request)
	ConnsActive               int
	ConnIPs                   int    // source IPs with a connection now (the per-IP quota table)
	PlayersJoined             uint64 // JoinServer requests allowed
	PlayersActive             int    // players counted against MaxPlayers now
	// Requests counts requests acted on (duplicates excluded) by type
	// name ("Connect", "JoinServer", …).
	Requests map[string]uint64
	// Responses counts responses sent (first transmissions) by type name.
	Responses map[string]uint64
	// Disallowed counts ServerDisallow responses by reason name.
	Disallowed map[string]uint64
	// Drops counts datagrams and messages dropped, by reason: a wire rule
	// id ("L-TYPE", …) for undecodable datagrams, "rate-limited",
	// "conn-cap", "conns-per-ip", "no-connect" (first datagram of an unknown peer without
	// a Connect request), "pre-auth", "out-of-order" (Security before
	// Connect, Authenticate before Security), "check-value",
	// "unsupported" (requests the engine never answers), "payload",
	// "send-failed" (the connection's in-flight bound), "amplification"
	// (datagrams not sent to an address not yet verified, beyond
	// AmplificationFactor times what it sent), "restart-too-soon" (a
	// Connect #1 from the address of a connection that sent later packets
	// and was heard from within 100 ms: a late copy or a new client, not
	// acked so that a new client resends it), "muted" (datagrams of such a
	// connection not sent until its address sends it an Ln packet again).
	Drops map[string]uint64
	// Closes counts ended connections by reason: close-connection,
	// idle-timeout, handshake-timeout, critical-lost, shutdown, restarted
	// (a new client's first Connect, PKT_ID 1001, from a known address).
	Closes map[string]uint64
	// Resends counts retransmissions, Duplicates suppressed duplicate
	// messages, Confirmed and Lost tracked responses.
	Resends, Duplicates, Confirmed, Lost uint64
	// AckReadingMismatch counts connections whose acks fit only the other
	// ack-bit reading.
	AckReadingMismatch uint64
	// Verified counts connections whose address was proven (a packet
	// acked one of ours), lifting the AmplificationFactor bound.
	Verified uint64
}

func (c *counters) snapshot() Stats {
	st := Stats{
		DatagramsIn: c.datagramsIn, DatagramsOut: c.datagramsOut, WriteErrors: c.writeErrors,
		ConnsOpened: c.connsOpened, PlayersJoined: c.playersJoined,
		Requests: map[string]uint64{}, Responses: map[string]uint64{},
		Disallowed: map[string]uint64{}, Drops: map[string]uint64{}, Closes: map[string]uint64{},
		Resends: c.resends, Duplicates: c.duplicates, Confirmed: c.confirmed, Lost: c.lost,
		AckReadingMismatch: c.ackReadingMismatch, Verified: c.verified,
	}
	for i, n := range c.requests {
		if n > 0 {
			name := levwire.RequestType(i).String()
			if i == len(c.requests)-1 {
				name = "other"
			}
			st.Requests[name] = n
		}
	}
	for i, n := range c.responses {
		if n > 0 {
			st.Responses[levwire.ResponseType(i).String()] = n
		}
	}
	for i, n := range c.disallowed {
		if n > 0 {
			st.Disallowed[levwire.DisallowReason(i).String()] = n
		}
	}
	for k, n := range c.drops {
		if n > 0 {
			st.Drops[k] = n
		}
	}
	for i, n := range c.closes {
		if n > 0 {
			st.Closes[closeNames[i]] = n
		}
	}
	return st
}

// Flat returns every counter under one dotted name ("conns.opened",
// "requests.JoinServer", "drops.pre-auth", …) for printing or merging into
// a report.
func (st Stats) Flat() map[string]uint64 {
	m := map[string]uint64{
		"datagrams.in":        st.DatagramsIn,
		"datagrams.out":       st.DatagramsOut,
		"datagrams.write_err": st.WriteErrors,
		"conns.opened":        st.ConnsOpened,
		"conns.active":        uint64(max(st.ConnsActive, 0)),
		"conns.source_ips":    uint64(max(st.ConnIPs, 0)),
		"players.joined":      st.PlayersJoined,
		"players.active":      uint64(max(st.PlayersActive, 0)),
		"engine.resends":      st.Resends,
		"engine.duplicates":   st.Duplicates,
		"engine.confirmed":    st.Confirmed,
		"engine.lost":         st.Lost,
		"engine.ack_reading":  st.AckReadingMismatch,
		"conns.verified":      st.Verified,
	}
	for k, v := range st.Requests {
		m["requests."+k] = v
	}
	for k, v := range st.Responses {
		m["responses."+k] = v
	}
	for k, v := range st.Disallowed {
		m["disallowed."+k] = v
	}
	for k, v := range st.Drops {
		m["drops."+k] = v
	}
	for k, v := range st.Closes {
		m["closes."+k] = v
	}
	return m
}
