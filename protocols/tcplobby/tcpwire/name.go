package tcpwire

// ProtocolName is the TCP lobby protocol's name, declared once: the scenario key
// protocol:, the --protocol flags, the reference server's part, results and
// conformance case groups all use it.
const ProtocolName = "tcp-lobby"
