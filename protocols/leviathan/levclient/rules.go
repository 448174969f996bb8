package levclient

import (
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/simclient"
)

// RuleMalformed: a datagram from the server the client could not decode,
// when the codec gave no more specific L- rule; RulePktDup: an Ln
// datagram received twice, byte for byte (same PKT_ID). The other
// semantic rules are declared where they are judged (RuleResponseTo, …).
const (
	RuleMalformed = "L-MALFORMED"
	RulePktDup    = "L-PKT-DUP"
)

// semanticRules are the Leviathan client's semantic rules, each with where
// docs/protocols states it.
var semanticRules = []simclient.RuleInfo{
	{ID: RuleResponseTo, Section: "leviathan.md §3", Summary: "a reply's ResponseTo is not the MessageNumber of the request it answers (StartWorldReceive and Echo's Response None: 0 or that number)"},
	{ID: RuleReplyType, Section: "leviathan.md §3", Summary: "a response naming the request in ResponseTo is not a legal answer (Connect→Connect, Security→Security, Authenticate→Authenticate, JoinServer→ServerAllow(ConnectAccepted)/ServerDisallow, JoinGame→ServerAllow(Done)/ServerDisallow, Serverstatus→ServerStatus), or ServerAllow carries the wrong AcceptedType"},
	{ID: RuleCheckValue, Section: "leviathan.md §2", Summary: "a Connect reply's CheckValue is not 42 (the engine ignores such a reply)"},
	{ID: RuleAckReading, Section: "leviathan.md §4", Summary: "the server's ack fields acknowledge ids this client never sent under the configured ack-bit reading but fit the other one (engine vs seed+1)"},
	{ID: RuleMalformedAnswer, Section: "leviathan.md §6", Summary: "the server answered a malformed datagram (truncated, unknown type, random bytes) with a message instead of dropping it"},
	{ID: RulePktDup, Section: "leviathan.md §1", Summary: "an Ln datagram received twice, byte for byte, with one PKT_ID: a resend takes a new PKT_ID, so the server (or a proxy) sent one datagram twice (conformance: leviathan/1/3)"},
	{ID: RuleMalformed, Section: "leviathan.md §1", Summary: "a datagram from the server could not be decoded and the codec gave no more specific L- rule"},
}

// rules is every rule id a Leviathan run can report: its codec's (whose
// table names no section) and its client's.
func rules() []simclient.RuleInfo {
	out := make([]simclient.RuleInfo, 0, len(levwire.Rules)+len(semanticRules))
	for _, r := range levwire.Rules {
		out = append(out, simclient.RuleInfo{ID: string(r.ID), Summary: r.Desc})
	}
	return append(out, semanticRules...)
}
