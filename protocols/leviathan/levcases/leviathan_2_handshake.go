package levcases

import (
	"errors"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// leviathan.md §2 handshake: Connect(42) → Security(None) → Authenticate,
// and nothing else acted on before it completes.

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/2/1", Protocol: ProtoLeviathan, Section: secLevHandshake, Level: conformance.Must,
		Owns:        []string{"Connect(42)"},
		Desc:        "Connect(42) is answered by Response Connect(42) with ResponseTo the request's MessageNumber",
		Requirement: "Handshake: client sends Connect(42); the server answers Connect(42) and may send its own Connect, which the client answers",
		Run:         runLev2_1,
	})
	addCase(&conformance.Case{
		ID: "leviathan/2/2", Protocol: ProtoLeviathan, Section: secLevHandshake, Level: conformance.Must,
		Owns:        []string{"Security(None)"},
		Desc:        "Security(None=1, \"\", \"\") after Connect is answered by Response Security with SecureType None",
		Requirement: "Then Security(None=1,\"\",\"\") → Security reply",
		Run:         runLev2_2,
	})
	addCase(&conformance.Case{
		ID: "leviathan/2/3", Protocol: ProtoLeviathan, Section: secLevHandshake, Level: conformance.Must,
		Owns:        []string{"Authenticate"},
		Desc:        "Authenticate after Security is answered by Response Authenticate (any credentials accepted)",
		Requirement: "then Authenticate → Authenticate reply (the engine accepts any credentials)",
		Run:         runLev2_3,
	})
	addCase(&conformance.Case{
		ID: "leviathan/2/4", Protocol: ProtoLeviathan, Section: secLevHandshake, Level: conformance.Must,
		Desc:        "JoinServer, JoinGame and Echo sent after Connect but before authentication get no reply (acks only)",
		Requirement: "Before authentication every other message is silently dropped",
		Run:         runLev2_4,
	})
}

func runLev2_1(t *conformance.T) error {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return err
	}
	defer c.Close()
	n, m, err := c.request(lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect)
	if err := expectReply("Connect(42)", n, m, err, lv.ResConnect); err != nil {
		return err
	}
	var p lv.Connect
	if err := p.Decode(m.Payload); err != nil || p.CheckValue != lv.CheckValue {
		return conformance.Failf("CheckValue 42", "%v (payload % x)", err, m.Payload)
	}
	return nil
}

func runLev2_2(t *conformance.T) error {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return err
	}
	defer c.Close()
	n, m, err := c.request(lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect)
	if err := expectReply("Connect(42)", n, m, err, lv.ResConnect); err != nil {
		return conformance.Precondition("Connect", err)
	}
	n, m, err = c.request(lv.ReqSecurity, lv.SecurityRequest{SecureType: lv.SecureTypeNone}.Append(nil), lv.ResSecurity)
	if err := expectReply("Security(None)", n, m, err, lv.ResSecurity); err != nil {
		return err
	}
	var p lv.SecurityResponse
	if err := p.Decode(m.Payload); err != nil || p.SecureType != lv.SecureTypeNone {
		return conformance.Failf("SecureType None (1)", "%+v %v", p, err)
	}
	return nil
}

func runLev2_3(t *conformance.T) error {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return err
	}
	defer c.Close()
	err = c.handshake()
	var v *conformance.VerifyError
	if errors.As(err, &v) && !strings.HasPrefix(v.Expected, "Response Authenticate to #") {
		return conformance.Precondition("Connect/Security", err)
	}
	return err
}

func runLev2_4(t *conformance.T) error {
	c, err := levDial(t, levconn.Config{})
	if err != nil {
		return err
	}
	defer c.Close()
	n, m, err := c.request(lv.ReqConnect, lv.Connect{CheckValue: lv.CheckValue}.Append(nil), lv.ResConnect)
	if err := expectReply("Connect(42)", n, m, err, lv.ResConnect); err != nil {
		return conformance.Precondition("Connect", err)
	}
	for _, r := range []struct {
		t lv.RequestType
		p []byte
	}{
		{lv.ReqJoinServer, lv.JoinServer{MasterServerToken: -1}.Append(nil)},
		{lv.ReqJoinGame, lv.JoinGame{}.Append(nil)},
		{lv.ReqEcho, nil},
	} {
		if _, err := c.send(r.t, r.p); err != nil {
			return err
		}
	}
	// A Response Keepalive (ResponseTo 0) carries acks, as the
	// engine sends it; it answers nothing, so it is not a reply.
	keepalives := 0
	m, err = c.await(func(m *lv.Message) bool {
		if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResKeepalive && m.ResponseTo == 0 {
			keepalives++
			return false
		}
		return m.Kind == lv.KindResponse
	}, 2*t.Env.Timeout)
	if keepalives > 0 {
		t.Notef("%d Response Keepalive (ResponseTo 0) received: acks, not replies", keepalives)
	}
	if err == nil {
		return conformance.Failf("silence before authentication", "%v", m)
	}
	if !errors.Is(err, conformance.ErrSilence) {
		return err
	}
	return nil
}
