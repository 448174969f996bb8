// Package observe serves the run's observers over HTTP — the live page
// (--dashboard-addr), the live metrics (--metrics-addr), serve's stats
// (--stats-addr) — so that watching a run can never take what its load
// needs. Every connection is bounded in time (request header, request,
// response, idle keep-alive: Timeouts), and their number by a Budget the
// observers of one process share, set from what the run's own sockets
// leave of the open-files limit (Budget.Reserve): the run's sockets are
// counted first, the observers get the rest. A connection over the
// budget is answered 503 and closed at once, so an observer is told why
// instead of waiting.
package observe

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The budget's bounds, in connections.
const (
	// DefaultConns is the observers' budget when the open-files limit
	// leaves room (or is unknown): a few browsers and scrapers, each with
	// a handful of keep-alive connections.
	DefaultConns = 32
	// MinConns is what observers get however little the run leaves: taken
	// from the run's margin of descriptors (engine.FilesMargin), which
	// counts its metrics listener and scrapes.
	MinConns = 4
)

// Timeouts bound each connection's life. No handler streams or long-polls
// (the live page polls /state once a second; a scrape is one response),
// so every request is short.
type Timeouts struct {
	ReadHeader time.Duration // the request's header
	Read       time.Duration // the whole request
	Write      time.Duration // from the request's header to the response's end
	// Idle is how long a keep-alive connection may wait for its next
	// request: above a browser's one-second poll and a scraper's usual
	// 15 s interval, so they keep theirs.
	Idle time.Duration
}

// DefaultTimeouts are the observers' timeouts.
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second, Idle: 30 * time.Second}

// Budget is how many connections the observers of one process may hold
// at once, shared by all their listeners. The zero value is not usable:
// NewBudget.
type Budget struct {
	mu      sync.Mutex
	limit   int
	open    int
	refused atomic.Int64
}

// NewBudget is a budget of DefaultConns.
func NewBudget() *Budget { return &Budget{limit: DefaultConns} }

// Reserve sets the budget from the open-files limit (0: unknown) and the
// descriptors the run needs of it (its estimate, margin included): what is
// left, at least MinConns and at most DefaultConns. Connections already
// open stay until they close.
func (b *Budget) Reserve(limit uint64, needed int) {
	n := DefaultConns
	if limit > 0 {
		left := int64(limit) - int64(needed)
		n = int(max(int64(MinConns), min(int64(DefaultConns), left)))
	}
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
}

// Limit is the budget, in connections.
func (b *Budget) Limit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Refused is how many connections were turned away over the budget.
func (b *Budget) Refused() int64 { return b.refused.Load() }

func (b *Budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open >= b.limit {
		return false
	}
	b.open++
	return true
}

func (b *Budget) put() {
	b.mu.Lock()
	b.open--
	b.mu.Unlock()
}

// Serve serves h on ln with DefaultTimeouts, within b (nil: a budget of
// its own), until the returned server is closed or shut down.
func Serve(ln net.Listener, h http.Handler, b *Budget) *http.Server {
	return ServeWith(ln, h, b, DefaultTimeouts)
}

// ServeWith is Serve with other timeouts (tests).
func ServeWith(ln net.Listener, h http.Handler, b *Budget, t Timeouts) *http.Server {
	if b == nil {
		b = NewBudget()
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle}
	go func() { _ = srv.Serve(&limited{Listener: ln, b: b}) }() // returns ErrServerClosed once closed
	return srv
}

// busyText is what a connection over the budget is told, whole (busy).
const busyText = "lobbybench: too many observers connected; the run's sockets come first\n"

var busy = fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(busyText), busyText)

// limited is a listener whose connections count against a budget.
type limited struct {
	net.Listener
	b *Budget
}

func (l *limited) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.b.take() {
			return &counted{Conn: c, b: l.b}, nil
		}
		l.b.refused.Add(1)
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte(busy))
		_ = c.Close()
	}
}

// counted gives its place in the budget back once closed.
type counted struct {
	net.Conn
	b    *Budget
	once sync.Once
}

func (c *counted) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.b.put)
	return err
}
