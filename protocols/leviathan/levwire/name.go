package levwire

// ProtocolName is the Leviathan protocol's name, declared once: the scenario key
// protocol:, the --protocol flags, the reference server's part, results and
// conformance case groups all use it.
const ProtocolName = "leviathan"
