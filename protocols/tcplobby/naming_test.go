package tcplobby_test

import (
	"testing"

	"github.com/lobbybench/lobbybench/internal/repocheck"
)

// TestNamedOnlyHere: no package the binary links names the tcp-lobby
// protocol (imports one of its packages or spells its name) but its own,
// and the files allowed below, each with the reason.
func TestNamedOnlyHere(t *testing.T) {
	repocheck.NamedOnlyHere(t, repocheck.Ownership{
		Name: "tcp-lobby",
		Own:  []string{"protocols/tcplobby"},
		Allowed: map[string]string{
			"protocols/all": "the one list of the protocols",
		},
	})
}
