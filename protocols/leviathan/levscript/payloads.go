package levscript

import (
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/script"
)

// Payload fields, encoders and decoders of leviathan.md §5's table, one
// group per payload. Defaults are the built-in client's values
// (protocols/leviathan/levclient).

// defaultUserName is the UserName the built-in connect step sends when
// the step names no player.
const defaultUserName = "player"

var connectFields = []script.Field{intField("CheckValue", 32)}

func encodeConnect(v *values, b []byte) []byte {
	return lv.Connect{CheckValue: v.i32("CheckValue", lv.CheckValue)}.Append(b)
}

func decodeConnect(b []byte) (map[string]any, error) {
	var p lv.Connect
	err := p.Decode(b)
	return map[string]any{"CheckValue": i32(p.CheckValue)}, err
}

var securityRequestFields = []script.Field{intField("SecureType", 32), textField("PublicKey"), textField("AdditionalSettings")}

func encodeSecurityRequest(v *values, b []byte) []byte {
	return lv.SecurityRequest{SecureType: v.i32("SecureType", lv.SecureTypeNone),
		PublicKey: v.str("PublicKey", ""), AdditionalSettings: v.str("AdditionalSettings", "")}.Append(b)
}

func decodeSecurityRequest(b []byte) (map[string]any, error) {
	var p lv.SecurityRequest
	err := p.Decode(b)
	return map[string]any{"SecureType": i32(p.SecureType), "PublicKey": string(p.PublicKey),
		"AdditionalSettings": string(p.AdditionalSettings)}, err
}

var securityResponseFields = []script.Field{intField("SecureType", 32), textField("PublicKey"), textField("EncryptedSymmetricKey")}

func encodeSecurityResponse(v *values, b []byte) []byte {
	return lv.SecurityResponse{SecureType: v.i32("SecureType", lv.SecureTypeNone),
		PublicKey: v.str("PublicKey", ""), EncryptedSymmetricKey: v.str("EncryptedSymmetricKey", "")}.Append(b)
}

func decodeSecurityResponse(b []byte) (map[string]any, error) {
	var p lv.SecurityResponse
	err := p.Decode(b)
	return map[string]any{"SecureType": i32(p.SecureType), "PublicKey": string(p.PublicKey),
		"EncryptedSymmetricKey": string(p.EncryptedSymmetricKey)}, err
}

var authRequestFields = []script.Field{textField("UserName"), intField("AuthToken", 64), textField("AuthPasswd")}

func encodeAuthRequest(v *values, b []byte) []byte {
	return lv.AuthenticateRequest{UserName: v.str("UserName", defaultUserName),
		AuthToken: v.uint("AuthToken", 0), AuthPasswd: v.str("AuthPasswd", "")}.Append(b)
}

func decodeAuthRequest(b []byte) (map[string]any, error) {
	var p lv.AuthenticateRequest
	err := p.Decode(b)
	return map[string]any{"UserName": string(p.UserName), "AuthToken": p.AuthToken, "AuthPasswd": string(p.AuthPasswd)}, err
}

var authResponseFields = []script.Field{intField("UserID", 32), intField("UserToken", 64)}

func encodeAuthResponse(v *values, b []byte) []byte {
	return lv.AuthenticateResponse{UserID: v.i32("UserID", 0), UserToken: v.uint("UserToken", 0)}.Append(b)
}

func decodeAuthResponse(b []byte) (map[string]any, error) {
	var p lv.AuthenticateResponse
	err := p.Decode(b)
	return map[string]any{"UserID": i32(p.UserID), "UserToken": p.UserToken}, err
}

var joinServerFields = []script.Field{intField("MasterServerToken", 32)}

func encodeJoinServer(v *values, b []byte) []byte {
	return lv.JoinServer{MasterServerToken: v.i32("MasterServerToken", lv.ClientMasterServerToken)}.Append(b)
}

func decodeJoinServer(b []byte) (map[string]any, error) {
	var p lv.JoinServer
	err := p.Decode(b)
	return map[string]any{"MasterServerToken": i32(p.MasterServerToken)}, err
}

var joinGameFields = []script.Field{textField("Options")}

func encodeJoinGame(v *values, b []byte) []byte {
	return lv.JoinGame{Options: v.str("Options", "")}.Append(b)
}

func decodeJoinGame(b []byte) (map[string]any, error) {
	var p lv.JoinGame
	err := p.Decode(b)
	return map[string]any{"Options": string(p.Options)}, err
}

var allowFields = []script.Field{intField("AcceptedType", 8), textField("Message")}

func encodeAllow(v *values, b []byte) []byte {
	return lv.ServerAllow{Accepted: lv.AcceptedType(v.u8("AcceptedType", 0)), Message: v.str("Message", "")}.Append(b)
}

func decodeAllow(b []byte) (map[string]any, error) {
	var p lv.ServerAllow
	err := p.Decode(b)
	return map[string]any{"AcceptedType": uint64(p.Accepted), "Message": string(p.Message)}, err
}

var disallowFields = []script.Field{textField("Message"), intField("Reason", 8)}

func encodeDisallow(v *values, b []byte) []byte {
	return lv.ServerDisallow{Message: v.str("Message", ""), Reason: lv.DisallowReason(v.u8("Reason", 0))}.Append(b)
}

func decodeDisallow(b []byte) (map[string]any, error) {
	var p lv.ServerDisallow
	err := p.Decode(b)
	return map[string]any{"Message": string(p.Message), "Reason": uint64(p.Reason)}, err
}

var startWorldFields = []script.Field{intField("WorldID", 32), intField("WorldType", 32), textField("ExtraOptions")}

func encodeStartWorld(v *values, b []byte) []byte {
	return lv.StartWorldReceive{WorldID: v.i32("WorldID", 0), WorldType: v.i32("WorldType", 0),
		ExtraOptions: v.str("ExtraOptions", "")}.Append(b)
}

func decodeStartWorld(b []byte) (map[string]any, error) {
	var p lv.StartWorldReceive
	err := p.Decode(b)
	return map[string]any{"WorldID": i32(p.WorldID), "WorldType": i32(p.WorldType), "ExtraOptions": string(p.ExtraOptions)}, err
}

var statusFields = []script.Field{textField("Name"), boolField("Joinable"), intField("JoinRestrict", 8),
	intField("Status", 8), intField("Players", 32), intField("MaxPlayers", 32), intField("Bots", 32), intField("Flags", 32)}

func encodeStatus(v *values, b []byte) []byte {
	return lv.ServerStatus{Name: v.str("Name", ""), Joinable: v.boolean("Joinable", false),
		JoinRestrict: v.u8("JoinRestrict", 0), Status: lv.ServerStatusCode(v.u8("Status", 0)),
		Players: v.i32("Players", 0), MaxPlayers: v.i32("MaxPlayers", 0), Bots: v.i32("Bots", 0),
		Flags: v.i32("Flags", 0)}.Append(b)
}

func decodeStatus(b []byte) (map[string]any, error) {
	var p lv.ServerStatus
	err := p.Decode(b)
	return map[string]any{"Name": string(p.Name), "Joinable": p.Joinable, "JoinRestrict": uint64(p.JoinRestrict),
		"Status": uint64(p.Status), "Players": i32(p.Players), "MaxPlayers": i32(p.MaxPlayers),
		"Bots": i32(p.Bots), "Flags": i32(p.Flags)}, err
}
