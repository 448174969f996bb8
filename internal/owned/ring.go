package owned

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLineBytes bounds one kept line of the server's output; the rest of a
// longer line is dropped and the line marked as cut.
const maxLineBytes = 2048

const cutMark = " …[line cut]"

// ring keeps the last n lines written to it, each at most maxLineBytes,
// and optionally copies every byte to a tee writer. It notes whether any
// line said "address already in use".
type ring struct {
	mu      sync.Mutex
	lines   []string // circular, len ≤ n
	next    int      // index of the oldest line when full
	n       int
	partial []byte
	cutting bool // dropping the rest of an over-long line
	inUse   bool
	tee     io.Writer
	teeMu   *sync.Mutex // shared by a Process's incarnations, which tee to one writer
}

func newRing(n int, tee io.Writer, teeMu *sync.Mutex) *ring {
	if teeMu == nil {
		teeMu = new(sync.Mutex)
	}
	return &ring{n: n, tee: tee, teeMu: teeMu}
}

// Write never fails: the server must not block or die because lobbybench
// could not keep its output (a failing tee is dropped silently).
func (r *ring) Write(b []byte) (int, error) {
	if r.tee != nil {
		r.teeMu.Lock()
		if _, err := r.tee.Write(b); err != nil {
			r.tee = nil
		}
		r.teeMu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rest := b
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if !r.cutting {
			room := maxLineBytes - len(r.partial)
			if len(chunk) > room {
				r.partial = append(r.partial, chunk[:room]...)
				r.push(string(r.partial) + cutMark)
				r.partial = r.partial[:0]
				r.cutting = true
			} else {
				r.partial = append(r.partial, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if r.cutting {
			r.cutting = false
		} else {
			r.push(string(bytes.TrimSuffix(r.partial, []byte{'\r'})))
			r.partial = r.partial[:0]
		}
		rest = rest[i+1:]
	}
	return len(b), nil
}

// flush keeps a last line that ended without a newline.
func (r *ring) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.partial) > 0 && !r.cutting {
		r.push(string(r.partial))
	}
	r.partial, r.cutting = r.partial[:0], false
}

func (r *ring) push(line string) {
	if strings.Contains(strings.ToLower(line), "address already in use") {
		r.inUse = true
	}
	if r.n <= 0 {
		return
	}
	if len(r.lines) < r.n {
		r.lines = append(r.lines, line)
		return
	}
	r.lines[r.next] = line
	r.next = (r.next + 1) % r.n
}

// tail returns the kept lines, oldest first.
func (r *ring) tail() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	return append(out, r.lines[:r.next]...)
}

func (r *ring) sawInUse() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inUse
}
