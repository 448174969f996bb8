package levconn

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// TestSendMessage: an encoded message goes out byte for byte in an Ln
// packet with the connection's PKT_ID, is resent under a new PKT_ID, is
// confirmed by the response to the number in its bytes, and the numbers
// the connection gives later messages go on after it.
func TestSendMessage(t *testing.T) {
	c := newConn(t, Config{})
	msg := levwire.AppendRequest(nil, 5, levwire.Connect{CheckValue: levwire.CheckValue})
	n, err := c.SendMessage(t0, Critical, msg)
	if err != nil || n != 5 {
		t.Fatalf("SendMessage = %d, %v; want 5", n, err)
	}
	first := pollAll(t, c, t0)
	c.Tick(t0.Add(time.Second))
	resent := pollAll(t, c, t0.Add(time.Second))
	if len(first) != 1 || len(resent) != 1 {
		t.Fatalf("%d datagrams, then %d resent; want 1 and 1", len(first), len(resent))
	}
	for i, p := range []*levwire.Packet{first[0], resent[0]} {
		if got := levwire.AppendMessage(nil, &p.Messages[0]); p.ID != 1001+uint32(i) || !bytes.Equal(got, msg) {
			t.Errorf("transmission %d: PKT_ID %d message % x; want PKT_ID %d and % x", i, p.ID, got, 1001+i, msg)
		}
	}
	c.Events()
	answer := &levwire.Packet{Type: levwire.TypeNormal, ID: 1,
		Messages: []levwire.Message{levwire.NewResponse(1, 5, levwire.Connect{CheckValue: levwire.CheckValue})}}
	c.Receive(t0.Add(time.Second), raw(t, answer))
	confirmed := false
	for _, e := range c.Events() {
		confirmed = confirmed || (e.Kind == EventConfirmed && e.Number == 5 && e.ByResponse)
	}
	if !confirmed || c.InFlight() != 0 {
		t.Errorf("the response to #5: confirmed %v, %d in flight; want confirmed, none", confirmed, c.InFlight())
	}
	for _, tc := range []struct {
		number, want uint32 // the message's number, then the connection's next
	}{
		{2, 6},          // below the connection's next: moves nothing
		{9, 10},         // above it: the connection goes on after it
		{^uint32(0), 1}, // the last: the next skips 0
	} {
		if _, err := c.SendMessage(t0, None, levwire.AppendRequest(nil, tc.number, levwire.Echo{})); err != nil {
			t.Fatal(err)
		}
		if got := c.NextMessageNumber(); got != tc.want {
			t.Errorf("after message #%d the next MessageNumber is %d, want %d", tc.number, got, tc.want)
		}
		if n, _ := c.SendRequest(t0, None, levwire.ReqEcho, nil); n != tc.want {
			t.Errorf("after message #%d SendRequest numbered %d, want %d", tc.number, n, tc.want)
		}
	}
}

// TestSendMessageBad: bytes that are no message are refused, naming why.
func TestSendMessageBad(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  []byte
		says string
	}{
		{"empty", nil, "empty"},
		{"kind", []byte{0x99, 0, 0, 0, 1, 0, 1}, "not 0x99"},
		{"short request", []byte{0x28, 0, 0, 0, 1}, "5 bytes"},
		{"short response", []byte{0x12, 0, 0, 0, 1, 0, 1, 0}, "header alone is 11"},
		{"too large", append([]byte{0x28, 0, 0, 0, 1, 0, 1}, make([]byte, 4096)...), "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConn(t, Config{})
			_, err := c.SendMessage(t0, Critical, tc.msg)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one saying %q", err, tc.says)
			}
			if c.NextMessageNumber() != 1 || c.Poll(t0) != nil {
				t.Error("a refused message moved the numbering or went out")
			}
		})
	}
}
