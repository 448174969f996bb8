package levclient

import (
	"errors"
	"strings"
	"testing"

	refsrv "github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// TestRefusalNamed: a ServerDisallow from the reference server fails its
// step (reason join_deny, as before) with a simclient.Refusal naming the
// request, the reply with its reason and message, what it means
// (leviathan.md) and the counter and setting that govern it.
func TestRefusalNamed(t *testing.T) {
	for _, tt := range []struct {
		name     string
		mod      func(*refsrv.Config)
		steps    string
		sessions int
		want     []string
	}{
		{"server full", func(c *refsrv.Config) { c.MaxPlayers = 1 }, "      - connect\n      - join_server\n      - think: 1s", 2,
			[]string{`the server answered ServerDisallow reason ServerFull (2) "server full" to JoinServer: `, "leviathan.md §3",
				"--leviathan-max-players", "embedded_server max_players", "leviathan.disallowed.ServerFull"}},
		{"not accepting", func(c *refsrv.Config) { c.NotAccepting = true }, "      - connect\n      - join_server", 1,
			[]string{`the server answered ServerDisallow reason ServerNotAcceptingPlayers (3) "server not accepting players" to JoinServer: `,
				"leviathan.md §3", "Config.NotAccepting", "no flag of lobbybench serve"}},
		{"second join", nil, "      - connect\n      - join_server\n      - join_server", 1,
			[]string{`the server answered ServerDisallow reason ServerAlreadyConnectedToYou (5) "already joined" to JoinServer: `,
				"leviathan/3/6", "leviathan.disallowed.ServerAlreadyConnectedToYou"}},
		{"game before server", nil, "      - connect\n      - join_game: {options: \"\"}", 1,
			[]string{`the server answered ServerDisallow reason NotAuthorized (4) "join the server first" to JoinGame: `,
				"leviathan.md §5", "leviathan.disallowed.NotAuthorized", "join_server first"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, tt.mod)
			_, errs := runAll(t, plan(t, "", tt.steps), s, tt.sessions)
			var refused []error
			for _, err := range errs {
				if err != nil {
					refused = append(refused, err)
				}
			}
			if len(refused) != 1 {
				t.Fatalf("%d sessions failed, want 1: %v", len(refused), errs)
			}
			err := refused[0]
			if !simclient.IsRefusal(err) {
				t.Fatalf("error %v is no refusal", err)
			}
			if r := simclient.ReasonOf(err); r != result.ReasonJoinDeny {
				t.Errorf("error %v: reason %s, want %s", err, r, result.ReasonJoinDeny)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDisallowHints: the reasons the reference server never sends are
// named with their meaning too, and an undefined one as the server's own.
func TestDisallowHints(t *testing.T) {
	for _, tt := range []struct {
		reason lv.DisallowReason
		req    lv.RequestType
		want   []string
	}{
		{lv.DisallowUnauthenticated, lv.ReqJoinServer, []string{"ServerDisallow reason Unauthenticated (0)", "before the handshake's Authenticate", "never sends it"}},
		{lv.DisallowUnsupported, lv.ReqJoinServer, []string{"reason Unsupported (1)", "does not support the request"}},
		{lv.DisallowInvalidParameters, lv.ReqJoinGame, []string{"reason InvalidParameters (6)", "to JoinGame: ", "no valid world to join"}},
		{lv.DisallowServerCustom, lv.ReqJoinServer, []string{"reason ServerCustom (7)", "vetoed"}},
		{42, lv.ReqJoinServer, []string{"reason DisallowReason(42) (42)", "a reason leviathan.md §5 does not define"}},
	} {
		t.Run(tt.reason.String(), func(t *testing.T) {
			var err error = disallowRefusal(tt.req, &lv.ServerDisallow{Reason: tt.reason, Message: []byte("why")})
			var rf *simclient.Refusal
			if !errors.As(err, &rf) || rf.Hint == "" {
				t.Fatalf("%v: no refusal with a hint", err)
			}
			for _, w := range append(tt.want, `"why"`, "the server answered ") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
