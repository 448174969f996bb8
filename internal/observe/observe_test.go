package observe

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipes is a listener of in-memory connections (net.Pipe), so that the
// tests run in a synctest bubble, on its clock.
type pipes struct {
	conns     chan net.Conn
	closeOnce sync.Once
	closed    chan struct{}
}

func newPipes() *pipes { return &pipes{conns: make(chan net.Conn), closed: make(chan struct{})} }

func (p *pipes) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.closed:
		return nil, net.ErrClosed
	}
}

func (p *pipes) Close() error   { p.closeOnce.Do(func() { close(p.closed) }); return nil }
func (p *pipes) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// dial is a client's end of a new connection.
func (p *pipes) dial() net.Conn {
	client, server := net.Pipe()
	p.conns <- server
	return client
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// get sends a keep-alive GET on c and reads the response.
func get(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	go io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Header.Set("X-Body", string(b))
	return resp
}

// TestIdleClosed: a keep-alive connection left idle is closed by the
// server after the idle timeout (without one, an idle observer holds its
// descriptor for ever).
func TestIdleClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := newPipes()
		srv := ServeWith(ln, ok, NewBudget(), Timeouts{ReadHeader: time.Hour, Read: time.Hour, Write: time.Hour, Idle: time.Minute})
		defer srv.Close()
		c := ln.dial()
		defer c.Close()
		if resp := get(t, c); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("status %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
		}
		read := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			read <- err
		}()
		time.Sleep(time.Minute - time.Second)
		synctest.Wait()
		select {
		case err := <-read:
			t.Fatalf("closed before the idle timeout: %v", err)
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case err := <-read:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("read %v, want EOF: the server closing", err)
			}
		default:
			t.Fatal("the idle connection is still open after the idle timeout")
		}
	})
}

// TestBudget: connections over the budget, idle ones included, are
// answered 503 and closed and counted; once one closes, its place serves
// again. Two listeners share one budget.
func TestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget()
		b.Reserve(100, 98) // 2 left, raised to MinConns
		if b.Limit() != MinConns {
			t.Fatalf("limit %d, want %d", b.Limit(), MinConns)
		}
		ln1, ln2 := newPipes(), newPipes()
		s1, s2 := Serve(ln1, ok, b), Serve(ln2, ok, b)
		defer s1.Close()
		defer s2.Close()
		var idle []net.Conn
		for i := range MinConns {
			ln := ln1
			if i%2 == 1 {
				ln = ln2
			}
			c := ln.dial()
			if resp := get(t, c); resp.StatusCode != 200 {
				t.Fatalf("connection %d: status %d", i, resp.StatusCode)
			}
			idle = append(idle, c)
		}
		for i, ln := range []*pipes{ln1, ln2} {
			c := ln.dial()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("over the budget on listener %d: %v, want a 503", i+1, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 503 || !strings.Contains(string(body), "too many observers") {
				t.Errorf("over the budget: %d %q, want 503 saying why", resp.StatusCode, body)
			}
			if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("a refused connection stays open: %v", err)
			}
			c.Close()
		}
		if b.Refused() != 2 {
			t.Errorf("refused %d, want 2", b.Refused())
		}
		idle[0].Close()
		synctest.Wait() // the server sees the close and gives the place back
		c := ln1.dial()
		defer c.Close()
		if resp := get(t, c); resp.StatusCode != 200 {
			t.Errorf("after a close: status %d, want 200", resp.StatusCode)
		}
		for _, c := range idle[1:] {
			c.Close()
		}
	})
}

// TestReserve: the observers get what the run's estimate leaves of the
// open-files limit, within MinConns and DefaultConns.
func TestReserve(t *testing.T) {
	for _, tt := range []struct {
		limit  uint64
		needed int
		want   int
	}{
		{0, 500, DefaultConns}, // unknown limit
		{400, 390, 10},         // what is left
		{400, 500, MinConns},   // nothing left: the margin's share
		{1 << 20, 400, DefaultConns},
	} {
		b := NewBudget()
		b.Reserve(tt.limit, tt.needed)
		if got := b.Limit(); got != tt.want {
			t.Errorf("Reserve(%d, %d): %d, want %d", tt.limit, tt.needed, got, tt.want)
		}
	}
}
