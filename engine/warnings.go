package engine

import (
	"io"
	"sync"
)

// serialWriter passes writes on one at a time. The engine writes its
// warnings from several goroutines at once (each worker's stderr pump,
// the scheduler, the progress loop, the first failed session), and the
// caller's Warnings need not be safe for that: a bytes.Buffer is not.
type serialWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *serialWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// serialWarnings returns w made safe for concurrent writes; nil stays nil
// (no warnings are printed), and a writer it already made is returned as
// it is.
func serialWarnings(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	if _, ok := w.(*serialWriter); ok {
		return w
	}
	return &serialWriter{w: w}
}
