package levcases

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// leviathan.md §3 lobby: JoinServer, JoinGame, Echo, Serverstatus, and the
// replies' ResponseTo (shared session lev-flow), then the refusals.

func init() {
	addCase(&conformance.Case{
		ID: "leviathan/3/1", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must,
		Desc:        "every reply's ResponseTo is the MessageNumber of the request it answers (0 for Echo's None and StartWorldReceive)",
		Requirement: "ResponseTo is the MessageNumber of the request answered, or 0",
		Run:         runLev3_1,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/2", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must,
		Owns:        []string{"ServerAllow to JoinServer"},
		Desc:        "JoinServer(-1) after authentication is answered by ServerAllow(ConnectAccepted, \"Allowed, ID: N\")",
		Requirement: "Lobby: JoinServer → ServerAllow(ConnectAccepted, \"Allowed, ID: N\") or ServerDisallow with the first failing reason … ids start at 1001",
		Run:         runLev3_2,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/3", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must,
		Desc:        "JoinGame(\"\") after a successful JoinServer is answered by ServerAllow(Done) and StartWorldReceive",
		Requirement: "Then JoinGame(\"\") → ServerAllow(Done) and StartWorldReceive",
		Run:         runLev3_3,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/4", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must,
		Desc:        "Echo after authentication is answered by Response None with ResponseTo 0",
		Requirement: "Echo after authentication → Response None with ResponseTo 0",
		Run:         runLev3_4,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/5", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Should,
		Owns:        []string{"ServerStatus"},
		Desc:        "Serverstatus is answered by ServerStatus (the engine itself never answers it: a warning there)",
		Requirement: "Identification and Serverstatus requests are never answered (an engine defect); the reference endpoint answers ServerStatus",
		Run:         runLev3_5,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/6", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must,
		Desc:        "a second JoinServer from a joined connection gets ServerDisallow reason ServerAlreadyConnectedToYou (5)",
		Requirement: "ServerDisallow with the first failing reason among: not accepting players (3), already joined (5), full (2), unauthenticated (0)",
		Run:         runLev3_6,
	})
	addCase(&conformance.Case{
		ID: "leviathan/3/7", Protocol: ProtoLeviathan, Section: secLevLobby, Level: conformance.Must, Phase: conformance.PhaseSerial,
		Desc:        "JoinServer when the server is full gets ServerDisallow reason ServerFull (2); fills at most MaxFill players as ServerStatus reports them",
		Requirement: "players counted against a configurable maximum … ServerDisallow with the first failing reason among: … full (2)",
		Run:         runLev3_7,
	})
}

func runLev3_1(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	// Match against the numbers the requests were actually sent
	// with: the client may have answered the server's own Connect
	// first, which shifts them.
	var nums []string
	for n, rt := range f.reqs {
		nums = append(nums, fmt.Sprintf("#%d %v", n, rt))
	}
	sort.Strings(nums)
	checked := 0
	for _, m := range f.msgs {
		if m.Kind != lv.KindResponse || m.ResponseTo == 0 {
			continue
		}
		if _, ok := f.reqs[m.ResponseTo]; !ok {
			return conformance.Failf(fmt.Sprintf("ResponseTo naming one of our requests (%s) or 0", strings.Join(nums, ", ")), "%v", m)
		}
		checked++
	}
	t.Notef("%d replies with a ResponseTo checked", checked)
	for _, c := range []struct {
		rt   lv.RequestType
		want lv.ResponseType
	}{{lv.ReqJoinServer, lv.ResServerAllow}, {lv.ReqJoinGame, lv.ResServerAllow}} {
		m, ok := f.reply(c.rt, c.want)
		if !ok {
			continue // leviathan/3/2-3 own a missing reply
		}
		if m.ResponseTo != f.num[c.rt] {
			return conformance.Failf(fmt.Sprintf("%v answered with ResponseTo %d", c.rt, f.num[c.rt]), "%v", m)
		}
	}
	return nil
}

func runLev3_2(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	if errors.Is(f.errs[lv.ReqJoinServer], conformance.ErrSilence) {
		return conformance.Failf("ServerAllow", "no reply to JoinServer")
	}
	m, ok := f.reply(lv.ReqJoinServer, lv.ResServerAllow, lv.ResServerDisallow)
	if !ok {
		return conformance.Failf("ServerAllow", "%s", f.missing(lv.ReqJoinServer, "ServerAllow/ServerDisallow"))
	}
	if m.ResponseType() == lv.ResServerDisallow {
		var d lv.ServerDisallow
		d.Decode(m.Payload)
		return conformance.Skipf("the server refused the join (%v %q): full or not accepting players?", d.Reason, d.Message)
	}
	var a lv.ServerAllow
	if err := a.Decode(m.Payload); err != nil {
		return conformance.Failf("a ServerAllow payload", "%v", err)
	}
	id, ok := a.PlayerID()
	if a.Accepted != lv.AcceptConnectAccepted || !ok || !strings.HasPrefix(string(a.Message), "Allowed, ID: ") {
		return conformance.Failf("ServerAllow(ConnectAccepted, \"Allowed, ID: N\")", "ServerAllow(%v, %q)", a.Accepted, a.Message)
	}
	t.Notef("player id %d", id)
	return nil
}

func runLev3_3(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	if m, ok := f.reply(lv.ReqJoinServer, lv.ResServerAllow); !ok || m == nil {
		return conformance.Skipf("JoinServer did not succeed (leviathan/3/2)")
	}
	m, ok := f.reply(lv.ReqJoinGame, lv.ResServerAllow, lv.ResServerDisallow)
	if !ok {
		return conformance.Failf("ServerAllow(Done)", "%s", f.missing(lv.ReqJoinGame, "ServerAllow/ServerDisallow"))
	}
	if m.ResponseType() == lv.ResServerDisallow {
		// A valid refusal (the engine: InvalidParameters, "No valid
		// world to join found" when it has no world loaded): the
		// protocol held, the join past it was not exercised.
		var d lv.ServerDisallow
		if err := d.Decode(m.Payload); err != nil {
			return conformance.Failf("ServerAllow(Done), or a decodable ServerDisallow", "%v: %v", m, err)
		}
		return conformance.Warnf("ServerAllow(Done) and StartWorldReceive",
			"ServerDisallow(%v, %q): the server refused JoinGame (with nothing to join, a valid answer); the world transfer was not exercised", d.Reason, d.Message)
	}
	var a lv.ServerAllow
	if m.ResponseType() != lv.ResServerAllow || a.Decode(m.Payload) != nil || a.Accepted != lv.AcceptDone {
		return conformance.Failf("ServerAllow(Done)", "%v (payload % x)", m, m.Payload)
	}
	if _, ok := f.reply(lv.ReqJoinGame, lv.ResStartWorldReceive); !ok {
		return conformance.Failf("StartWorldReceive", "ServerAllow(Done) without StartWorldReceive")
	}
	return nil
}

func runLev3_4(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	for _, m := range f.msgs {
		if m.Kind == lv.KindResponse && m.ResponseType() == lv.ResNone {
			if m.ResponseTo != 0 && m.ResponseTo != f.num[lv.ReqEcho] {
				return conformance.Failf("ResponseTo 0", "%v", m)
			}
			if m.ResponseTo != 0 {
				return conformance.Warnf("ResponseTo 0 (the engine's)", "%v: ResponseTo names the Echo", m)
			}
			return nil
		}
	}
	return conformance.Failf("Response None", "no Response None after Echo")
}

func runLev3_5(t *conformance.T) error {
	f, err := levFlowFixture(t)
	if err != nil {
		return err
	}
	m, ok := f.reply(lv.ReqServerstatus, lv.ResServerStatus)
	if !ok {
		return conformance.Warnf("ServerStatus", "%s (unanswered: the engine's known defect)", f.missing(lv.ReqServerstatus, "ServerStatus"))
	}
	var st lv.ServerStatus
	if err := st.Decode(m.Payload); err != nil {
		return conformance.Failf("a ServerStatus payload", "%v", err)
	}
	t.Notef("ServerStatus %q joinable %v status %v players %d/%d", st.Name, st.Joinable, st.Status, st.Players, st.MaxPlayers)
	return nil
}

func runLev3_6(t *conformance.T) error {
	c, err := levAuthed(t)
	if err != nil {
		return err
	}
	defer c.close()
	_, m, err := c.request(lv.ReqJoinServer, lv.JoinServer{MasterServerToken: -1}.Append(nil))
	if err != nil || m.ResponseType() != lv.ResServerAllow {
		return conformance.Owned(ProtoLeviathan, "ServerAllow to JoinServer", conformance.Skipf("first JoinServer not allowed (%v %v)", m, err))
	}
	n, m, err := c.request(lv.ReqJoinServer, lv.JoinServer{MasterServerToken: -1}.Append(nil))
	return expectDisallow(n, m, err, lv.DisallowServerAlreadyConnectedToYou)
}

func runLev3_7(t *conformance.T) error {
	watcher, err := levAuthed(t)
	if err != nil {
		return err
	}
	defer watcher.close()
	_, m, err := watcher.request(lv.ReqServerstatus, nil, lv.ResServerStatus)
	if err != nil {
		return conformance.Owned(ProtoLeviathan, "ServerStatus", conformance.Skipf("no ServerStatus to learn the player limit: %v", err))
	}
	var st lv.ServerStatus
	if err := st.Decode(m.Payload); err != nil {
		return conformance.Owned(ProtoLeviathan, "ServerStatus", conformance.Skipf("ServerStatus undecodable: %v", err))
	}
	free := int(st.MaxPlayers - st.Players)
	limit := max(t.Env.MaxFill, 64)
	if free < 0 || free > limit {
		return conformance.Skipf("%d free player slots (max %d): more than the %d this case fills", free, st.MaxPlayers, limit)
	}
	var clients []*levClient
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	for i := 0; i < free; i++ {
		c, err := levAuthed(t)
		if err != nil {
			return err
		}
		clients = append(clients, c)
		_, m, err := c.request(lv.ReqJoinServer, lv.JoinServer{MasterServerToken: -1}.Append(nil))
		if err != nil || m.ResponseType() != lv.ResServerAllow {
			return conformance.Owned(ProtoLeviathan, "ServerAllow to JoinServer", conformance.Skipf("filling: join %d of %d not allowed (%v %v)", i+1, free, m, err))
		}
	}
	n, m, err := watcher.request(lv.ReqJoinServer, lv.JoinServer{MasterServerToken: -1}.Append(nil))
	return expectDisallow(n, m, err, lv.DisallowServerFull)
}

func expectDisallow(n uint32, m *lv.Message, err error, want lv.DisallowReason) error {
	exp := fmt.Sprintf("ServerDisallow reason %v (%d)", want, want)
	if errors.Is(err, conformance.ErrSilence) {
		return conformance.Failf(exp, "%s", conformance.ReplyWords(err, fmt.Sprintf("no reply to JoinServer #%d", n)))
	}
	if err != nil {
		return err
	}
	if m.ResponseType() != lv.ResServerDisallow || m.ResponseTo != n {
		return conformance.Failf(exp, "%v", m)
	}
	var d lv.ServerDisallow
	if err := d.Decode(m.Payload); err != nil {
		return conformance.Failf(exp, "undecodable ServerDisallow: %v", err)
	}
	if d.Reason != want {
		return conformance.Failf(exp, "reason %v (%d) %q", d.Reason, d.Reason, d.Message)
	}
	return nil
}

// close tells the server the session ends (CloseConnection, acked within a
// short wait) and closes the socket, so a case leaves no player behind.
func (c *levClient) close() {
	c.d.SendResponse(levconn.Critical, lv.ResCloseConnection, 0, nil)
	c.pump(200 * time.Millisecond)
	c.Close()
}
