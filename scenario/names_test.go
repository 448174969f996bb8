package scenario

// The names of the protocols these tests load scenarios of (each protocol
// declares its own in its wire package, which this package does not
// import).
const (
	UDPLobby  ProtocolName = "udp-lobby"
	TCPLobby  ProtocolName = "tcp-lobby"
	Leviathan ProtocolName = "leviathan"
)
