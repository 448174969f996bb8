package udplobby_test

import (
	"testing"

	"github.com/lobbybench/lobbybench/internal/repocheck"
)

// TestNamedOnlyHere: no package the binary links names the udp-lobby
// protocol (imports one of its packages or spells its name) but its own,
// and the files allowed below, each with the reason.
func TestNamedOnlyHere(t *testing.T) {
	repocheck.NamedOnlyHere(t, repocheck.Ownership{
		Name: "udp-lobby",
		Own:  []string{"protocols/udplobby"},
		Allowed: map[string]string{
			"protocols/all": "the one list of the protocols",
			"protocols/tcplobby/tcpcases/tcp_6_flow.go": "tcp-lobby's games are played on udp-lobby's instances",
		},
	})
}
