package tcpcases

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lobbybench/lobbybench/conformance"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// tcp-lobby.md §7.1 Connection errors, with the framing decisions of
// tcp-lobby.md §2.2 and §7.

const reqErrorClose = "Server must send ERROR_MSG before closing connection (§7.1); a frame whose length is 0 or over 4096 bytes, or whose type is unknown, or whose size does not match its type's fixed size: the server sends ERROR_MSG (0x1F) then closes (tcp-lobby.md §7)"

func init() {
	le := binary.LittleEndian
	groups := []struct {
		n    int
		desc string
		rule string
		b    []byte
	}{
		{1, "a zero-length frame gets ERROR_MSG, then the connection is closed", tcpwire.RuleFrameEmpty, le.AppendUint32(nil, 0)},
		{2, "a frame longer than 4096 bytes gets ERROR_MSG, then the connection is closed", tcpwire.RuleFrameTooLarge,
			append(le.AppendUint32(nil, 100000), make([]byte, 64)...)},
		{3, "a frame of an unknown type gets ERROR_MSG, then the connection is closed", tcpwire.RuleTypeUnknown,
			append(le.AppendUint32(nil, 1), 0xEE)},
		{4, "a frame whose size is wrong for its type (LIST_ROOMS_REQ of 2 bytes) gets ERROR_MSG, then the connection is closed", tcpwire.RuleSizeFixed,
			append(le.AppendUint32(nil, 2), byte(tcpwire.TypeListRoomsReq), 0)},
	}
	for _, g := range groups {
		addCase(&conformance.Case{
			ID: fmt.Sprintf("tcp-lobby/7.1/%d", g.n), Protocol: ProtoTCP, Section: secTCPErrors, Rule: g.rule, Level: conformance.Must,
			Desc: g.desc, Requirement: reqErrorClose,
			Run: func(t *conformance.T) error { return errorThenClose(t, g.b) },
		})
	}
}

func errorThenClose(t *conformance.T, b []byte) error {
	c, err := dialTCP(t)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.sendRaw(b, "bad frame"); err != nil {
		return err
	}
	const expected = "ERROR_MSG, then the server closes the connection"
	p, err := c.wait(t.Env.Timeout, tcpwire.TypeErrorMsg)
	switch {
	case errors.Is(err, errClosed):
		return conformance.Fail(expected, "the connection was closed without an ERROR_MSG")
	case errors.Is(err, conformance.ErrSilence):
		return conformance.Failf(expected, "no ERROR_MSG and the connection stayed open for %v (received: %s)", t.Env.Timeout, typeNames(c.frames))
	case err != nil:
		return err
	}
	var m tcpwire.ErrorMsg
	if err := decodeAs(p, &m); err != nil {
		return conformance.Failf("a well-formed ERROR_MSG", "%v", err)
	}
	t.Notef("ERROR_MSG 0x%02x %q", uint8(m.Code), m.Text)
	// Then the end of the stream.
	for {
		_, err := c.read(t.Env.Timeout)
		if errors.Is(err, errClosed) {
			return nil
		}
		if errors.Is(err, conformance.ErrSilence) {
			return conformance.Failf(expected, "ERROR_MSG 0x%02x received, but the connection stayed open for %v", uint8(m.Code), t.Env.Timeout)
		}
		if err != nil {
			return err
		}
	}
}
