package levscript

import (
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// Header field names (leviathan.md §1.3).
const (
	fieldNumber     = "MessageNumber"
	fieldResponseTo = "ResponseTo"
)

// maxMessage is the largest message one Ln packet carries: a datagram
// less the largest Ln header (4 ack bytes).
const maxMessage = lv.MaxDatagram - (2 + 4 + 4 + 1 + lv.MaxAckBytes + 1)

// maxText bounds one string: the largest message less a response header
// and the string's length.
const maxText = maxMessage - (1 + 4 + 2 + 4) - 4

// entry is one message of the catalog and how it is made and read.
type entry struct {
	msg  script.Message
	kind lv.MessageKind
	typ  uint16
	// answers are the requests a response answers: its ResponseTo
	// defaults to the last of them decoded (none: 0).
	answers []lv.RequestType
	// encode appends the payload made of v; decode reads a payload the
	// codec has already shaped.
	encode func(v *values, b []byte) []byte
	decode func(p []byte) (map[string]any, error)
}

func intField(name string, bits int) script.Field {
	return script.Field{Name: name, Kind: script.Int, Bits: bits}
}

func textField(name string) script.Field {
	return script.Field{Name: name, Kind: script.Text, Max: maxText}
}

func boolField(name string) script.Field { return script.Field{Name: name, Kind: script.Bool} }

// request is the entry of request type t with the given payload fields.
func request(t lv.RequestType, payload []script.Field, enc func(*values, []byte) []byte,
	dec func([]byte) (map[string]any, error)) entry {
	fields := append([]script.Field{{Name: fieldNumber, Kind: script.Int, Bits: 32, Auto: true}}, payload...)
	return entry{
		msg:  script.Message{Name: requestPrefix + t.String(), FromClient: true, Fields: fields},
		kind: lv.KindRequest, typ: uint16(t), encode: enc, decode: dec,
	}
}

// response is the entry of response type t; fromClient says the built-in
// client sends it too.
func response(t lv.ResponseType, fromClient bool, answers []lv.RequestType, payload []script.Field,
	enc func(*values, []byte) []byte, dec func([]byte) (map[string]any, error)) entry {
	fields := append([]script.Field{
		{Name: fieldNumber, Kind: script.Int, Bits: 32, Auto: true},
		{Name: fieldResponseTo, Kind: script.Int, Bits: 32, Auto: true},
	}, payload...)
	return entry{
		msg:  script.Message{Name: responsePrefix + t.String(), FromClient: fromClient, Fields: fields},
		kind: lv.KindResponse, typ: uint16(t), answers: answers, encode: enc, decode: dec,
	}
}

// Name prefixes: the kind as the document writes it ("Request Connect").
const (
	requestPrefix  = "Request "
	responsePrefix = "Response "
)

// empty is a payload of no bytes (Echo, Serverstatus, Keepalive, …).
func encodeEmpty(_ *values, b []byte) []byte { return b }

func decodeEmpty(p []byte) (map[string]any, error) {
	var e lv.Echo // every empty payload decodes alike: no bytes
	return map[string]any{}, e.Decode(p)
}

// entries are the catalog's messages: the requests, then the responses,
// in the order of their types (leviathan.md §5).
var entries = []entry{
	request(lv.ReqConnect, connectFields, encodeConnect, decodeConnect),
	request(lv.ReqSecurity, securityRequestFields, encodeSecurityRequest, decodeSecurityRequest),
	request(lv.ReqAuthenticate, authRequestFields, encodeAuthRequest, decodeAuthRequest),
	request(lv.ReqServerstatus, nil, encodeEmpty, decodeEmpty),
	request(lv.ReqJoinServer, joinServerFields, encodeJoinServer, decodeJoinServer),
	request(lv.ReqJoinGame, joinGameFields, encodeJoinGame, decodeJoinGame),
	request(lv.ReqEcho, nil, encodeEmpty, decodeEmpty),
	response(lv.ResConnect, false, []lv.RequestType{lv.ReqConnect}, connectFields, encodeConnect, decodeConnect),
	response(lv.ResSecurity, false, []lv.RequestType{lv.ReqSecurity}, securityResponseFields, encodeSecurityResponse, decodeSecurityResponse),
	response(lv.ResAuthenticate, false, []lv.RequestType{lv.ReqAuthenticate}, authResponseFields, encodeAuthResponse, decodeAuthResponse),
	response(lv.ResKeepalive, false, nil, nil, encodeEmpty, decodeEmpty),
	response(lv.ResCloseConnection, true, nil, nil, encodeEmpty, decodeEmpty),
	response(lv.ResServerDisallow, false, joins, disallowFields, encodeDisallow, decodeDisallow),
	response(lv.ResServerAllow, false, joins, allowFields, encodeAllow, decodeAllow),
	response(lv.ResServerStatus, false, []lv.RequestType{lv.ReqServerstatus}, statusFields, encodeStatus, decodeStatus),
	response(lv.ResStartWorldReceive, false, nil, startWorldFields, encodeStartWorld, decodeStartWorld),
	response(lv.ResNone, false, nil, nil, encodeEmpty, decodeEmpty),
}

// joins are the requests ServerAllow and ServerDisallow answer.
var joins = []lv.RequestType{lv.ReqJoinServer, lv.ReqJoinGame}

// byName finds an entry by its message name.
func byName(name string) (*entry, bool) {
	for i := range entries {
		if entries[i].msg.Name == name {
			return &entries[i], true
		}
	}
	return nil, false
}

// byType finds the entry of a message kind and type.
func byType(kind lv.MessageKind, typ uint16) (*entry, bool) {
	for i := range entries {
		if entries[i].kind == kind && entries[i].typ == typ {
			return &entries[i], true
		}
	}
	return nil, false
}

// Name is the catalog's name of a message of kind and type ("Request
// Connect"), or "" when the catalog has none.
func Name(kind lv.MessageKind, typ uint16) string {
	if e, ok := byType(kind, typ); ok {
		return e.msg.Name
	}
	return ""
}
