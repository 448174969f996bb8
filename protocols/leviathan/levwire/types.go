package levwire

import "strconv"

// Wire constants.
const (
	// MaxDatagram is the largest UDP payload (IPv4) and so the largest packet.
	MaxDatagram = 65507
	// MaxAckBytes is the most ack bytes the engine puts in an Ln packet (32 ids).
	MaxAckBytes = 4
	// MaxAckOnlyIDs is the largest La Count the seed allows (the engine accepts up to 255).
	MaxAckOnlyIDs = 4
	// FirstPacketID is the engine's first PKT_ID (the seed says 1).
	FirstPacketID uint32 = 1001
	// FirstMessageNumber is the first MessageNumber of a connection direction.
	FirstMessageNumber uint32 = 1
	// CheckValue is the Connect payload value both sides send.
	CheckValue int32 = 42
	// SecureTypeNone is the Security SecureType for no encryption.
	SecureTypeNone int32 = 1
	// ClientMasterServerToken is what clients send in JoinServer.
	ClientMasterServerToken int32 = -1

	lnHeaderLen  = 2 + 4 + 4 // type, PKT_ID, StartAck
	reqHeaderLen = 1 + 4 + 2
	resHeaderLen = 1 + 4 + 2 + 4
)

// PacketType is the u16 at the start of every datagram.
type PacketType uint16

// Packet types.
const (
	TypeNormal  PacketType = 0x4C6E // "Ln"
	TypeAckOnly PacketType = 0x4C61 // "La"
)

// String implements fmt.Stringer.
func (t PacketType) String() string {
	switch t {
	case TypeNormal:
		return "Ln"
	case TypeAckOnly:
		return "La"
	}
	return "PacketType(0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

// MessageKind is the first byte of a message.
type MessageKind uint8

// Message kinds.
const (
	KindRequest  MessageKind = 0x28
	KindResponse MessageKind = 0x12
)

// String implements fmt.Stringer.
func (k MessageKind) String() string {
	switch k {
	case KindRequest:
		return "Request"
	case KindResponse:
		return "Response"
	}
	return "MessageKind(0x" + strconv.FormatUint(uint64(k), 16) + ")"
}

// RequestType is Leviathan::NETWORK_REQUEST_TYPE.
type RequestType uint16

// Request types.
const (
	ReqConnect RequestType = iota
	ReqSecurity
	ReqAuthenticate
	ReqIdentification
	ReqServerstatus
	ReqRemoteConsoleOpen
	ReqRemoteConsoleAccess
	ReqCloseRemoteConsole
	ReqDoRemoteConsoleOpen
	ReqJoinServer
	ReqJoinGame
	ReqGetSingleSyncValue
	ReqGetAllSyncValues
	ReqRequestCommandExecution
	ReqConnectInput
	ReqEcho
	ReqWorldClockSync
	ReqCustom
)

var requestNames = [...]string{
	"Connect", "Security", "Authenticate", "Identification", "Serverstatus",
	"RemoteConsoleOpen", "RemoteConsoleAccess", "CloseRemoteConsole", "DoRemoteConsoleOpen",
	"JoinServer", "JoinGame", "GetSingleSyncValue", "GetAllSyncValues",
	"RequestCommandExecution", "ConnectInput", "Echo", "WorldClockSync", "Custom",
}

// String implements fmt.Stringer.
func (t RequestType) String() string {
	if int(t) < len(requestNames) {
		return requestNames[t]
	}
	return "RequestType(" + strconv.Itoa(int(t)) + ")"
}

// ResponseType is Leviathan::NETWORK_RESPONSE_TYPE.
type ResponseType uint16

// Response types.
const (
	ResConnect ResponseType = iota
	ResSecurity
	ResAuthenticate
	ResIdentification
	ResKeepalive
	ResCloseConnection
	ResRemoteConsoleClosed
	ResRemoteConsoleOpened
	ResInvalidRequest
	ResServerDisallow
	ResServerAllow
	ResServerStatus
	ResSyncValData
	ResSyncDataEnd
	ResSyncResourceData
	ResCreateNetworkedInput
	ResUpdateNetworkedInput
	ResDisconnectInput
	ResStartWorldReceive
	ResEntityCreation
	ResEntityUpdate
	ResEntityDestruction
	ResEntityLocalControlStatus
	ResCacheUpdated
	ResCacheRemoved
	ResWorldFrozen
	ResServerHeartbeat
	ResStartHeartbeats
	ResNone
	ResCustom
)

var responseNames = [...]string{
	"Connect", "Security", "Authenticate", "Identification", "Keepalive",
	"CloseConnection", "RemoteConsoleClosed", "RemoteConsoleOpened", "InvalidRequest",
	"ServerDisallow", "ServerAllow", "ServerStatus", "SyncValData", "SyncDataEnd",
	"SyncResourceData", "CreateNetworkedInput", "UpdateNetworkedInput", "DisconnectInput",
	"StartWorldReceive", "EntityCreation", "EntityUpdate", "EntityDestruction",
	"EntityLocalControlStatus", "CacheUpdated", "CacheRemoved", "WorldFrozen",
	"ServerHeartbeat", "StartHeartbeats", "None", "Custom",
}

// String implements fmt.Stringer.
func (t ResponseType) String() string {
	if int(t) < len(responseNames) {
		return responseNames[t]
	}
	return "ResponseType(" + strconv.Itoa(int(t)) + ")"
}

// AcceptedType is the ServerAllow reason.
type AcceptedType uint8

// Accepted types.
const (
	AcceptConnectAccepted AcceptedType = iota
	AcceptRequestQueued
	AcceptDone
)

// String implements fmt.Stringer.
func (a AcceptedType) String() string {
	switch a {
	case AcceptConnectAccepted:
		return "ConnectAccepted"
	case AcceptRequestQueued:
		return "RequestQueued"
	case AcceptDone:
		return "Done"
	}
	return "AcceptedType(" + strconv.Itoa(int(a)) + ")"
}

// DisallowReason is the ServerDisallow reason.
type DisallowReason uint8

// Disallow reasons.
const (
	DisallowUnauthenticated DisallowReason = iota
	DisallowUnsupported
	DisallowServerFull
	DisallowServerNotAcceptingPlayers
	DisallowNotAuthorized
	DisallowServerAlreadyConnectedToYou
	DisallowInvalidParameters
	DisallowServerCustom
)

var disallowNames = [...]string{
	"Unauthenticated", "Unsupported", "ServerFull", "ServerNotAcceptingPlayers",
	"NotAuthorized", "ServerAlreadyConnectedToYou", "InvalidParameters", "ServerCustom",
}

// String implements fmt.Stringer.
func (r DisallowReason) String() string {
	if int(r) < len(disallowNames) {
		return disallowNames[r]
	}
	return "DisallowReason(" + strconv.Itoa(int(r)) + ")"
}

// ServerStatusCode is the ServerStatus Status field.
type ServerStatusCode uint8

// Server status codes.
const (
	StatusStarting ServerStatusCode = iota
	StatusRunning
	StatusShutdown
	StatusRestart
)

// String implements fmt.Stringer.
func (s ServerStatusCode) String() string {
	switch s {
	case StatusStarting:
		return "Starting"
	case StatusRunning:
		return "Running"
	case StatusShutdown:
		return "Shutdown"
	case StatusRestart:
		return "Restart"
	}
	return "ServerStatusCode(" + strconv.Itoa(int(s)) + ")"
}
