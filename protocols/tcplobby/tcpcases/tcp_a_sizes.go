package tcpcases

import (
	"fmt"
	"strings"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §A Packet size summary.

func init() {
	addCase(&conformance.Case{
		ID: "tcp-lobby/A/1", Protocol: ProtoTCP, Section: secTCPSizes, Rule: tcpwire.RuleSizeFixed + ", " + tcpwire.RuleSizeCount, Level: conformance.Must,
		Owns:        []string{"Appendix A frame sizes"},
		Desc:        "every frame received during a four-player game has its Appendix A size (fixed, or header + count × entry)",
		Requirement: "Appendix A: LIST_ROOMS_ACK (header) 2, RoomInfo 39, CREATE_ROOM_ACK 13, JOIN_ROOM_ACK (header) 11, PlayerInfo 42, ROOM_UPDATE (header) 2, CONNECT_ACK 10, PLAYER_JOIN 43, PLAYER_READY 10, COUNTDOWN 2, GAME_START 220, PLAYER_LEFT 9",
		Run: func(t *conformance.T) error {
			g, err := tcpGameFx(t)
			if err != nil {
				return err
			}
			var bad []string
			seen := map[tcpwire.Type]int{}
			for i, c := range g.clients {
				for _, p := range c.frames {
					typ, err := tcpwire.CheckSize(p)
					seen[typ]++
					if err != nil {
						bad = append(bad, fmt.Sprintf("player %d: %v", i+1, err))
					}
				}
			}
			for _, x := range []struct {
				who string
				p   []byte
			}{{"a fifth client", g.fullJoin}, {"a client joining the game in progress", g.inGame}} {
				if len(x.p) == 0 {
					continue
				}
				typ, err := tcpwire.CheckSize(x.p)
				seen[typ]++
				if err != nil {
					bad = append(bad, fmt.Sprintf("%s: %v", x.who, err))
				}
			}
			if len(bad) > 0 {
				if len(bad) > 8 {
					bad = append(bad[:8], fmt.Sprintf("… %d more", len(bad)-8))
				}
				return conformance.Fail("Appendix A sizes", strings.Join(bad, "; "))
			}
			var s []string
			for _, typ := range tcpwire.Types {
				if seen[typ] > 0 {
					s = append(s, fmt.Sprintf("%v×%d", typ, seen[typ]))
				}
			}
			t.Notef("checked %s", strings.Join(s, ", "))
			return nil
		},
	})
}
