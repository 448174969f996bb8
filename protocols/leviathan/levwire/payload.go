package levwire

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// field is one element of a payload shape.
type field uint8

const (
	fI32 field = iota + 1
	fU64
	fU8
	fBool
	fStr
	fAccepted // u8 AcceptedType, at most AcceptDone
	fReason   // u8 DisallowReason, at most DisallowServerCustom
	fStatus   // u8 ServerStatusCode, at most StatusRestart
)

// enumMax is the largest defined value of an enum field.
func (f field) enumMax() (uint8, string) {
	switch f {
	case fAccepted:
		return uint8(AcceptDone), "AcceptedType"
	case fReason:
		return uint8(DisallowServerCustom), "DisallowReason"
	case fStatus:
		return uint8(StatusRestart), "ServerStatus Status"
	}
	return 255, ""
}

// Payload shapes of the messages in the table of leviathan.md §5. A nil shape with
// ok=false means the type's payload is unknown, so decoding cannot find the
// next message.
var (
	shapeNone        = []field{}
	shapeConnect     = []field{fI32}
	shapeSecurity    = []field{fI32, fStr, fStr}
	shapeAuthReq     = []field{fStr, fU64, fStr}
	shapeAuthRes     = []field{fI32, fU64}
	shapeJoinServer  = []field{fI32}
	shapeJoinGame    = []field{fStr}
	shapeAllow       = []field{fAccepted, fStr}
	shapeDisallow    = []field{fStr, fReason}
	shapeStartWorld  = []field{fI32, fI32, fStr}
	shapeServerState = []field{fStr, fBool, fU8, fStatus, fI32, fI32, fI32, fI32}
)

func requestShape(t RequestType) ([]field, bool) {
	switch t {
	case ReqConnect:
		return shapeConnect, true
	case ReqSecurity:
		return shapeSecurity, true
	case ReqAuthenticate:
		return shapeAuthReq, true
	case ReqJoinServer:
		return shapeJoinServer, true
	case ReqJoinGame:
		return shapeJoinGame, true
	case ReqEcho, ReqServerstatus:
		return shapeNone, true
	}
	return nil, false
}

func responseShape(t ResponseType) ([]field, bool) {
	switch t {
	case ResConnect:
		return shapeConnect, true
	case ResSecurity:
		return shapeSecurity, true
	case ResAuthenticate:
		return shapeAuthRes, true
	case ResServerAllow:
		return shapeAllow, true
	case ResServerDisallow:
		return shapeDisallow, true
	case ResStartWorldReceive:
		return shapeStartWorld, true
	case ResKeepalive, ResCloseConnection, ResNone:
		return shapeNone, true
	case ResServerStatus:
		return shapeServerState, true
	}
	return nil, false
}

// KnownRequest reports whether the codec knows the payload of request type t
// (and so can decode past such a message).
func KnownRequest(t RequestType) bool { _, ok := requestShape(t); return ok }

// KnownResponse reports whether the codec knows the payload of response type t.
func KnownResponse(t ResponseType) bool { _, ok := responseShape(t); return ok }

// payloadLen walks shape over b starting at off and returns the payload
// length. String lengths are checked against the bytes left, never trusted.
func payloadLen(b []byte, off int, shape []field, strict bool) (int, *Error) {
	p := off
	for _, f := range shape {
		switch f {
		case fI32:
			p += 4
		case fU64:
			p += 8
		case fU8:
			p++
		case fAccepted, fReason, fStatus:
			if max, name := f.enumMax(); p < len(b) && strict && b[p] > max {
				return 0, errf(RuleEnum, p, "%s %d is not defined", name, b[p])
			}
			p++
		case fBool:
			if p < len(b) && strict && b[p] > 1 {
				return 0, errf(RuleBool, p, "bool byte is %d", b[p])
			}
			p++
		case fStr:
			if p+4 > len(b) {
				return 0, errf(RuleMsgTruncated, off, "payload needs a string length at byte %d, datagram has %d bytes", p, len(b))
			}
			n := binary.BigEndian.Uint32(b[p:])
			if uint64(n) > uint64(len(b)-p-4) {
				return 0, errf(RuleStringLength, p, "string length %d, %d bytes left", n, len(b)-p-4)
			}
			p += 4 + int(n)
		}
		if p > len(b) {
			return 0, errf(RuleMsgTruncated, off, "payload ends at byte %d, datagram has %d bytes", p, len(b))
		}
	}
	return p - off, nil
}

// reader decodes one payload whose length is already known. The first error
// sticks; later reads return zero values.
type reader struct {
	b   []byte
	off int
	err *Error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n > len(r.b)-r.off {
		r.err = errf(RuleMsgTruncated, r.off, "payload needs %d bytes, %d left", n, len(r.b)-r.off)
		return false
	}
	return true
}

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) i32() int32 {
	if !r.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return int32(v)
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.BigEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// str returns a sub-slice of the input (no copy).
func (r *reader) str() []byte {
	if !r.need(4) {
		return nil
	}
	n := binary.BigEndian.Uint32(r.b[r.off:])
	if uint64(n) > uint64(len(r.b)-r.off-4) {
		r.err = errf(RuleStringLength, r.off, "string length %d, %d bytes left", n, len(r.b)-r.off-4)
		return nil
	}
	s := r.b[r.off+4 : r.off+4+int(n) : r.off+4+int(n)]
	r.off += 4 + int(n)
	return s
}

func (r *reader) done() error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.b) {
		return errf(RulePayload, r.off, "%d bytes after the payload", len(r.b)-r.off)
	}
	return nil
}

func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendI32(b []byte, v int32) []byte  { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendStr(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// RequestPayload is the typed payload of a request message.
type RequestPayload interface {
	RequestType() RequestType
	// Append appends the payload's wire bytes to b.
	Append(b []byte) []byte
}

// ResponsePayload is the typed payload of a response message.
type ResponsePayload interface {
	ResponseType() ResponseType
	// Append appends the payload's wire bytes to b.
	Append(b []byte) []byte
}

// Decoded payloads hold strings as []byte sub-slices of the datagram: they
// are valid only while the datagram buffer is; call Clone to keep them.

// Connect is the payload of Request Connect and Response Connect.
type Connect struct{ CheckValue int32 }

// SecurityRequest is the payload of Request Security.
type SecurityRequest struct {
	SecureType         int32
	PublicKey          []byte
	AdditionalSettings []byte
}

// SecurityResponse is the payload of Response Security.
type SecurityResponse struct {
	SecureType            int32
	PublicKey             []byte
	EncryptedSymmetricKey []byte
}

// AuthenticateRequest is the payload of Request Authenticate.
type AuthenticateRequest struct {
	UserName   []byte
	AuthToken  uint64
	AuthPasswd []byte
}

// AuthenticateResponse is the payload of Response Authenticate.
type AuthenticateResponse struct {
	UserID    int32
	UserToken uint64
}

// JoinServer is the payload of Request JoinServer.
type JoinServer struct{ MasterServerToken int32 }

// JoinGame is the payload of Request JoinGame.
type JoinGame struct{ Options []byte }

// Echo is the (empty) payload of Request Echo.
type Echo struct{}

// ServerStatusRequest is the (empty) payload of Request Serverstatus,
// answered (by endpoints that answer it; the engine does not) with Response
// ServerStatus.
type ServerStatusRequest struct{}

// ServerAllow is the payload of Response ServerAllow.
type ServerAllow struct {
	Accepted AcceptedType
	Message  []byte
}

// ServerDisallow is the payload of Response ServerDisallow.
type ServerDisallow struct {
	Message []byte
	Reason  DisallowReason
}

// StartWorldReceive is the payload of Response StartWorldReceive.
type StartWorldReceive struct {
	WorldID      int32
	WorldType    int32
	ExtraOptions []byte
}

// Keepalive is the (empty) payload of Response Keepalive.
type Keepalive struct{}

// CloseConnection is the (empty) payload of Response CloseConnection.
type CloseConnection struct{}

// None is the (empty) payload of Response None.
type None struct{}

// ServerStatus is the payload of Response ServerStatus.
type ServerStatus struct {
	Name         []byte
	Joinable     bool
	JoinRestrict uint8
	Status       ServerStatusCode
	Players      int32
	MaxPlayers   int32
	Bots         int32
	Flags        int32
}

// Request/response types of the payloads.

// RequestType implements RequestPayload.
func (Connect) RequestType() RequestType { return ReqConnect }

// ResponseType implements ResponsePayload.
func (Connect) ResponseType() ResponseType { return ResConnect }

// RequestType implements RequestPayload.
func (SecurityRequest) RequestType() RequestType { return ReqSecurity }

// ResponseType implements ResponsePayload.
func (SecurityResponse) ResponseType() ResponseType { return ResSecurity }

// RequestType implements RequestPayload.
func (AuthenticateRequest) RequestType() RequestType { return ReqAuthenticate }

// ResponseType implements ResponsePayload.
func (AuthenticateResponse) ResponseType() ResponseType { return ResAuthenticate }

// RequestType implements RequestPayload.
func (JoinServer) RequestType() RequestType { return ReqJoinServer }

// RequestType implements RequestPayload.
func (JoinGame) RequestType() RequestType { return ReqJoinGame }

// RequestType implements RequestPayload.
func (Echo) RequestType() RequestType { return ReqEcho }

// RequestType implements RequestPayload.
func (ServerStatusRequest) RequestType() RequestType { return ReqServerstatus }

// ResponseType implements ResponsePayload.
func (ServerAllow) ResponseType() ResponseType { return ResServerAllow }

// ResponseType implements ResponsePayload.
func (ServerDisallow) ResponseType() ResponseType { return ResServerDisallow }

// ResponseType implements ResponsePayload.
func (StartWorldReceive) ResponseType() ResponseType { return ResStartWorldReceive }

// ResponseType implements ResponsePayload.
func (Keepalive) ResponseType() ResponseType { return ResKeepalive }

// ResponseType implements ResponsePayload.
func (CloseConnection) ResponseType() ResponseType { return ResCloseConnection }

// ResponseType implements ResponsePayload.
func (None) ResponseType() ResponseType { return ResNone }

// ResponseType implements ResponsePayload.
func (ServerStatus) ResponseType() ResponseType { return ResServerStatus }

// Append methods.

// Append appends the wire bytes of p.
func (p Connect) Append(b []byte) []byte { return appendI32(b, p.CheckValue) }

// Append appends the wire bytes of p.
func (p SecurityRequest) Append(b []byte) []byte {
	return appendStr(appendStr(appendI32(b, p.SecureType), p.PublicKey), p.AdditionalSettings)
}

// Append appends the wire bytes of p.
func (p SecurityResponse) Append(b []byte) []byte {
	return appendStr(appendStr(appendI32(b, p.SecureType), p.PublicKey), p.EncryptedSymmetricKey)
}

// Append appends the wire bytes of p.
func (p AuthenticateRequest) Append(b []byte) []byte {
	b = appendStr(b, p.UserName)
	b = binary.BigEndian.AppendUint64(b, p.AuthToken)
	return appendStr(b, p.AuthPasswd)
}

// Append appends the wire bytes of p.
func (p AuthenticateResponse) Append(b []byte) []byte {
	return binary.BigEndian.AppendUint64(appendI32(b, p.UserID), p.UserToken)
}

// Append appends the wire bytes of p.
func (p JoinServer) Append(b []byte) []byte { return appendI32(b, p.MasterServerToken) }

// Append appends the wire bytes of p.
func (p JoinGame) Append(b []byte) []byte { return appendStr(b, p.Options) }

// Append appends the wire bytes of p (none).
func (Echo) Append(b []byte) []byte { return b }

// Append appends the wire bytes of p (none).
func (ServerStatusRequest) Append(b []byte) []byte { return b }

// Append appends the wire bytes of p.
func (p ServerAllow) Append(b []byte) []byte {
	return appendStr(append(b, byte(p.Accepted)), p.Message)
}

// Append appends the wire bytes of p.
func (p ServerDisallow) Append(b []byte) []byte {
	return append(appendStr(b, p.Message), byte(p.Reason))
}

// Append appends the wire bytes of p.
func (p StartWorldReceive) Append(b []byte) []byte {
	return appendStr(appendI32(appendI32(b, p.WorldID), p.WorldType), p.ExtraOptions)
}

// Append appends the wire bytes of p (none).
func (Keepalive) Append(b []byte) []byte { return b }

// Append appends the wire bytes of p (none).
func (CloseConnection) Append(b []byte) []byte { return b }

// Append appends the wire bytes of p (none).
func (None) Append(b []byte) []byte { return b }

// Append appends the wire bytes of p.
func (p ServerStatus) Append(b []byte) []byte {
	b = appendStr(b, p.Name)
	b = appendBool(b, p.Joinable)
	b = append(b, p.JoinRestrict, byte(p.Status))
	b = appendI32(b, p.Players)
	b = appendI32(b, p.MaxPlayers)
	b = appendI32(b, p.Bots)
	return appendI32(b, p.Flags)
}

// Decode methods: each decodes exactly the payload bytes b (Message.Payload),
// without copying strings. Errors carry the offset inside b.

// Decode decodes p from b.
func (p *Connect) Decode(b []byte) error {
	r := reader{b: b}
	p.CheckValue = r.i32()
	return r.done()
}

// Decode decodes p from b.
func (p *SecurityRequest) Decode(b []byte) error {
	r := reader{b: b}
	p.SecureType, p.PublicKey, p.AdditionalSettings = r.i32(), r.str(), r.str()
	return r.done()
}

// Decode decodes p from b.
func (p *SecurityResponse) Decode(b []byte) error {
	r := reader{b: b}
	p.SecureType, p.PublicKey, p.EncryptedSymmetricKey = r.i32(), r.str(), r.str()
	return r.done()
}

// Decode decodes p from b.
func (p *AuthenticateRequest) Decode(b []byte) error {
	r := reader{b: b}
	p.UserName, p.AuthToken, p.AuthPasswd = r.str(), r.u64(), r.str()
	return r.done()
}

// Decode decodes p from b.
func (p *AuthenticateResponse) Decode(b []byte) error {
	r := reader{b: b}
	p.UserID, p.UserToken = r.i32(), r.u64()
	return r.done()
}

// Decode decodes p from b.
func (p *JoinServer) Decode(b []byte) error {
	r := reader{b: b}
	p.MasterServerToken = r.i32()
	return r.done()
}

// Decode decodes p from b.
func (p *JoinGame) Decode(b []byte) error {
	r := reader{b: b}
	p.Options = r.str()
	return r.done()
}

// Decode checks that b is empty.
func (*Echo) Decode(b []byte) error { r := reader{b: b}; return r.done() }

// Decode checks that b is empty.
func (*ServerStatusRequest) Decode(b []byte) error { r := reader{b: b}; return r.done() }

// Decode decodes p from b.
func (p *ServerAllow) Decode(b []byte) error {
	r := reader{b: b}
	p.Accepted = AcceptedType(r.u8())
	p.Message = r.str()
	return r.done()
}

// Decode decodes p from b.
func (p *ServerDisallow) Decode(b []byte) error {
	r := reader{b: b}
	p.Message = r.str()
	p.Reason = DisallowReason(r.u8())
	return r.done()
}

// Decode decodes p from b.
func (p *StartWorldReceive) Decode(b []byte) error {
	r := reader{b: b}
	p.WorldID, p.WorldType, p.ExtraOptions = r.i32(), r.i32(), r.str()
	return r.done()
}

// Decode checks that b is empty.
func (*Keepalive) Decode(b []byte) error { r := reader{b: b}; return r.done() }

// Decode checks that b is empty.
func (*CloseConnection) Decode(b []byte) error { r := reader{b: b}; return r.done() }

// Decode checks that b is empty.
func (*None) Decode(b []byte) error { r := reader{b: b}; return r.done() }

// Decode decodes p from b. Any non-zero bool byte reads as true, as in the
// engine; Decode of a whole packet in Strict mode reports RuleBool.
func (p *ServerStatus) Decode(b []byte) error {
	r := reader{b: b}
	p.Name = r.str()
	p.Joinable = r.u8() != 0
	p.JoinRestrict = r.u8()
	p.Status = ServerStatusCode(r.u8())
	p.Players, p.MaxPlayers, p.Bots, p.Flags = r.i32(), r.i32(), r.i32(), r.i32()
	return r.done()
}

// Clone methods copy the byte strings out of the datagram buffer.

// Clone returns a copy of p that does not share memory with the datagram.
func (p SecurityRequest) Clone() SecurityRequest {
	p.PublicKey, p.AdditionalSettings = clone(p.PublicKey), clone(p.AdditionalSettings)
	return p
}

// Clone returns a copy of p that does not share memory with the datagram.
func (p SecurityResponse) Clone() SecurityResponse {
	p.PublicKey, p.EncryptedSymmetricKey = clone(p.PublicKey), clone(p.EncryptedSymmetricKey)
	return p
}

// Clone returns a copy of p that does not share memory with the datagram.
func (p AuthenticateRequest) Clone() AuthenticateRequest {
	p.UserName, p.AuthPasswd = clone(p.UserName), clone(p.AuthPasswd)
	return p
}

// Clone returns a copy of p that does not share memory with the datagram.
func (p JoinGame) Clone() JoinGame { p.Options = clone(p.Options); return p }

// Clone returns a copy of p that does not share memory with the datagram.
func (p ServerAllow) Clone() ServerAllow { p.Message = clone(p.Message); return p }

// Clone returns a copy of p that does not share memory with the datagram.
func (p ServerDisallow) Clone() ServerDisallow { p.Message = clone(p.Message); return p }

// Clone returns a copy of p that does not share memory with the datagram.
func (p StartWorldReceive) Clone() StartWorldReceive {
	p.ExtraOptions = clone(p.ExtraOptions)
	return p
}

// Clone returns a copy of p that does not share memory with the datagram.
func (p ServerStatus) Clone() ServerStatus { p.Name = clone(p.Name); return p }

// PlayerID returns the first decimal number in the ServerAllow message
// ("Allowed, ID: 1001" → 1001), which the engine uses as the player id.
func (p ServerAllow) PlayerID() (int, bool) {
	i := bytes.IndexFunc(p.Message, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return 0, false
	}
	j := i
	for j < len(p.Message) && p.Message[j] >= '0' && p.Message[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(string(p.Message[i:j]))
	return n, err == nil
}

// DecodeRequestPayload decodes the payload of a request of type t into its
// typed form, a pointer such as *Connect (allocating; hot paths use the
// concrete Decode methods).
func DecodeRequestPayload(t RequestType, b []byte) (RequestPayload, error) {
	var p interface {
		RequestPayload
		Decode([]byte) error
	}
	switch t {
	case ReqConnect:
		p = &Connect{}
	case ReqSecurity:
		p = &SecurityRequest{}
	case ReqAuthenticate:
		p = &AuthenticateRequest{}
	case ReqJoinServer:
		p = &JoinServer{}
	case ReqJoinGame:
		p = &JoinGame{}
	case ReqEcho:
		p = &Echo{}
	case ReqServerstatus:
		p = &ServerStatusRequest{}
	default:
		return nil, errf(RuleMsgType, -1, "no payload shape known for request %s", t)
	}
	if err := p.Decode(b); err != nil {
		return nil, err
	}
	return p, nil
}

// DecodeResponsePayload decodes the payload of a response of type t into its
// typed form, a pointer such as *Connect (allocating; hot paths use the
// concrete Decode methods).
func DecodeResponsePayload(t ResponseType, b []byte) (ResponsePayload, error) {
	var p interface {
		ResponsePayload
		Decode([]byte) error
	}
	switch t {
	case ResConnect:
		p = &Connect{}
	case ResSecurity:
		p = &SecurityResponse{}
	case ResAuthenticate:
		p = &AuthenticateResponse{}
	case ResServerAllow:
		p = &ServerAllow{}
	case ResServerDisallow:
		p = &ServerDisallow{}
	case ResStartWorldReceive:
		p = &StartWorldReceive{}
	case ResKeepalive:
		p = &Keepalive{}
	case ResCloseConnection:
		p = &CloseConnection{}
	case ResNone:
		p = &None{}
	case ResServerStatus:
		p = &ServerStatus{}
	default:
		return nil, errf(RuleMsgType, -1, "no payload shape known for response %s", t)
	}
	if err := p.Decode(b); err != nil {
		return nil, err
	}
	return p, nil
}
