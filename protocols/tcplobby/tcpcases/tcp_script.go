package tcpcases

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpscript"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// scriptConn is a user case's transport: a connection the case dials
// from its paced source, each unit one frame's payload, every frame in
// the wire log.
type scriptConn struct{ c *tcpClient }

// scriptTransport is the group's ScriptTransport.
func scriptTransport(t *conformance.T) (conformance.ScriptConn, error) {
	c, err := dialTCP(t)
	if err != nil {
		return nil, err
	}
	return scriptConn{c}, nil
}

// Send writes payload b as one frame, its length prefix added.
func (s scriptConn) Send(_ string, b []byte) (time.Time, error) {
	note := ""
	if len(b) > 0 {
		note = tcpwire.Type(b[0]).String()
	}
	err := s.c.sendRaw(tcpscript.Frame(b), note)
	return time.Now(), err
}

// Recv reads the next frame's payload.
func (s scriptConn) Recv(deadline time.Time) (string, []byte, time.Time, error) {
	d := time.Until(deadline)
	if d <= 0 {
		return "", nil, time.Now(), os.ErrDeadlineExceeded
	}
	p, err := s.c.read(d)
	if errors.Is(err, conformance.ErrSilence) {
		return "", nil, time.Now(), fmt.Errorf("%w: %v", os.ErrDeadlineExceeded, err)
	}
	return "", p, time.Now(), err
}

func (s scriptConn) Close() error {
	s.c.Close()
	return nil
}
