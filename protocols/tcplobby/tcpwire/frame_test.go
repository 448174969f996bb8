package tcpwire

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

// countingReader counts the bytes handed out by the underlying reader.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// endless serves the same byte forever: a peer lying about its length and
// then streaming garbage.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func stream(msgs ...Message) []byte {
	var b []byte
	for _, m := range msgs {
		b = AppendFrame(b, m)
	}
	return b
}

func TestFrameReaderHugeLength(t *testing.T) {
	for _, n := range []uint32{4097, 1 << 20, 0x7FFFFFFF, 0xFFFFFFFF} {
		hdr := le.AppendUint32(nil, n)
		cr := &countingReader{r: io.MultiReader(bytes.NewReader(hdr), endless(0xAA))}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		fr := NewFrameReader(cr, 0)
		_, err := fr.Next()
		runtime.ReadMemStats(&after)
		var e *Error
		if !errors.As(err, &e) || e.Rule != RuleFrameTooLarge {
			t.Fatalf("length %d: %v, want %s", n, err, RuleFrameTooLarge)
		}
		if cr.n != HeaderSize {
			t.Fatalf("length %d: read %d bytes, want only the %d-byte header", n, cr.n, HeaderSize)
		}
		if fr.Length != n {
			t.Fatalf("Length = %d, want %d", fr.Length, n)
		}
		// Buffer (4096) + reader + error; never anything near n.
		if got := after.TotalAlloc - before.TotalAlloc; got > 16<<10 {
			t.Fatalf("length %d: allocated %d bytes", n, got)
		}
		// Sticky: the stream is out of sync.
		if _, err2 := fr.Next(); err2 != err || cr.n != HeaderSize {
			t.Fatalf("second Next: %v, read %d", err2, cr.n)
		}
	}
}

func TestFrameReaderCustomMax(t *testing.T) {
	b := stream(&CreateRoomReq{}) // 65-byte payload
	fr := NewFrameReader(bytes.NewReader(b), 64)
	if _, err := fr.Next(); RuleOf(err) != RuleFrameTooLarge {
		t.Fatalf("max 64: %v", err)
	}
	fr = NewFrameReader(bytes.NewReader(b), 65)
	if p, err := fr.Next(); err != nil || len(p) != 65 {
		t.Fatalf("max 65: %v %d", err, len(p))
	}
	if fr.Max() != 65 || NewFrameReader(nil, -1).Max() != DefaultMaxFrame {
		t.Fatal("Max")
	}
	// Exactly DefaultMaxFrame is accepted.
	big := append(le.AppendUint32(nil, DefaultMaxFrame), append([]byte{0x1F, 6}, bytes.Repeat([]byte("x"), DefaultMaxFrame-2)...)...)
	if p, err := NewFrameReader(bytes.NewReader(big), 0).Next(); err != nil || len(p) != DefaultMaxFrame {
		t.Fatalf("4096: %v", err)
	}
}

func TestFrameReaderZeroLength(t *testing.T) {
	cr := &countingReader{r: bytes.NewReader(append([]byte{0, 0, 0, 0}, stream(&ReadyReq{})...))}
	fr := NewFrameReader(cr, 0)
	if _, err := fr.Next(); RuleOf(err) != RuleFrameEmpty {
		t.Fatalf("got %v, want %s", err, RuleFrameEmpty)
	}
	if cr.n != 4 {
		t.Fatalf("read %d bytes", cr.n)
	}
}

func TestFrameReaderSplitReads(t *testing.T) {
	var msgs []Message
	for _, s := range samples() {
		msgs = append(msgs, s.msg)
	}
	b := stream(msgs...)
	wraps := map[string]func(io.Reader) io.Reader{
		"whole":           func(r io.Reader) io.Reader { return r },
		"onebyte":         iotest.OneByteReader,
		"half":            iotest.HalfReader,
		"dataerr":         iotest.DataErrReader,
		"onebyte+dataerr": func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) },
	}
	for name, wrap := range wraps {
		t.Run(name, func(t *testing.T) {
			fr := NewFrameReader(wrap(bytes.NewReader(b)), 0)
			for i, want := range msgs {
				p, err := fr.Next()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if !bytes.Equal(p, Marshal(want)) {
					t.Fatalf("frame %d differs", i)
				}
				if _, err := Decode(p); err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
			}
			if _, err := fr.Next(); err != io.EOF {
				t.Fatalf("end: %v, want io.EOF", err)
			}
		})
	}
}

func TestFrameReaderTruncated(t *testing.T) {
	full := stream(&PlayerReady{PlayerHash: 9, Ready: true}) // 4 + 10 bytes
	for cut := 1; cut < len(full); cut++ {
		fr := NewFrameReader(bytes.NewReader(full[:cut]), 0)
		_, err := fr.Next()
		if RuleOf(err) != RuleFrameTruncated || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	// Clean EOF between frames.
	fr := NewFrameReader(bytes.NewReader(nil), 0)
	if _, err := fr.Next(); err != io.EOF {
		t.Fatalf("empty stream: %v", err)
	}
}

func TestFrameReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	fr := NewFrameReader(iotest.ErrReader(boom), 0)
	if _, err := fr.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

func TestFrameReaderNoAllocs(t *testing.T) {
	one := stream(&PlayerReady{PlayerHash: 1, Ready: true})
	r := bytes.NewReader(nil)
	fr := NewFrameReader(r, 0)
	var m PlayerReady
	allocs := memfig.Allocs(100, func() {
		r.Reset(one)
		p, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeInto(p, &m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per frame read+decode, want 0", allocs)
	}
}

func TestFrameWriter(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	if err := fw.WriteMessage(&Countdown{Seconds: 3}); err != nil {
		t.Fatal(err)
	}
	if err := fw.WritePayload([]byte{0x42}); err != nil {
		t.Fatal(err)
	}
	want := []byte{2, 0, 0, 0, 0x19, 3, 1, 0, 0, 0, 0x42}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("% x, want % x", buf.Bytes(), want)
	}
	boom := errors.New("closed")
	if err := NewFrameWriter(errWriter{boom}).WriteMessage(&ReadyReq{}); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }
