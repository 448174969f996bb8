package tcpwire

import (
	"errors"
	"io"
)

// DecodeInto decodes payload p strictly into m (DecodeOpts with zero Options).
func DecodeInto(p []byte, m Message) error { return m.DecodeOpts(p, Options{}) }

// FrameReader reads length-prefixed frames from a stream. It owns one buffer
// of at most max bytes, allocated once, and never allocates more whatever the
// length prefix says: a prefix of 0 or above max is rejected with an *Error
// (RuleFrameEmpty, RuleFrameTooLarge) before any body byte is read, so a server
// can answer ERROR_MSG and close. Such errors are sticky: the stream is out of
// sync, every later Next returns the same error.
//
// A FrameReader is not safe for concurrent use.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [HeaderSize]byte
	buf []byte
	err error
	// Length is the length prefix of the last frame header read (also set
	// when that prefix was rejected), for diagnostics.
	Length uint32
}

// NewFrameReader returns a FrameReader on r accepting payloads of at most max
// bytes; max <= 0 means DefaultMaxFrame.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{r: r, max: max, buf: make([]byte, max)}
}

// Max returns the maximum payload size.
func (fr *FrameReader) Max() int { return fr.max }

// Next reads one frame and returns its payload (type byte first). The slice
// aliases the reader's buffer and is valid until the next call. At a clean
// end of stream between frames it returns io.EOF; a stream ending inside a
// frame gives an *Error with RuleFrameTruncated wrapping io.ErrUnexpectedEOF.
// Other read errors are returned as they are.
func (fr *FrameReader) Next() ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	if n, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if err == io.EOF {
			return nil, err // not sticky: a caller may retry a transient reader
		}
		return nil, fr.fail(truncated(err, n, "length prefix"))
	}
	n := le.Uint32(fr.hdr[:])
	fr.Length = n
	if n == 0 {
		return nil, fr.fail(errf(RuleFrameEmpty, 0, -1, "frame length 0"))
	}
	if uint64(n) > uint64(fr.max) {
		return nil, fr.fail(errf(RuleFrameTooLarge, 0, -1, "frame length %d exceeds maximum %d", n, fr.max))
	}
	p := fr.buf[:n]
	if got, err := io.ReadFull(fr.r, p); err != nil {
		return nil, fr.fail(truncated(err, got, "payload"))
	}
	return p, nil
}

func (fr *FrameReader) fail(err error) error {
	fr.err = err
	return err
}

func truncated(err error, got int, what string) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		e := errf(RuleFrameTruncated, 0, -1, "stream ended after %d bytes of the %s", got, what)
		e.Err = io.ErrUnexpectedEOF
		return e
	}
	return err
}

// FrameWriter writes frames to w, one Write call per frame, reusing one
// buffer. It is not safe for concurrent use.
type FrameWriter struct {
	w   io.Writer
	buf []byte
}

// NewFrameWriter returns a FrameWriter on w.
func NewFrameWriter(w io.Writer) *FrameWriter {
	return &FrameWriter{w: w, buf: make([]byte, 0, 256)}
}

// WriteMessage writes m as one frame.
func (fw *FrameWriter) WriteMessage(m Message) error {
	fw.buf = AppendFrame(fw.buf[:0], m)
	_, err := fw.w.Write(fw.buf)
	return err
}

// WritePayload writes a raw payload (type byte first) as one frame; the
// conformance suite uses it to send malformed packets.
func (fw *FrameWriter) WritePayload(p []byte) error {
	fw.buf = append(le.AppendUint32(fw.buf[:0], uint32(len(p))), p...)
	_, err := fw.w.Write(fw.buf)
	return err
}

// Decoder decodes payloads into one reused message per type, so a
// connection's read loop decodes without allocating (ERROR_MSG's text
// excepted) once it has met each type: a type's message is made by its
// first Decode, so that a client keeps those of the types it receives (a
// LIST_ROOMS_ACK's is 1.6 KB; all 18 and their table were 9 KB a
// connection). The message returned by Decode is valid until the next
// Decode of the same type. A Decoder is not safe for concurrent use.
type Decoder struct {
	Opts Options
	msgs [TypeErrorMsg + 1]Message // by type id (0x01-0x1F)
}

// NewDecoder returns a Decoder using opts.
func NewDecoder(opts Options) *Decoder {
	return &Decoder{Opts: opts}
}

// Decode checks and decodes payload p into the reused message of its type.
func (d *Decoder) Decode(p []byte) (Message, error) {
	t, err := CheckSize(p)
	if err != nil {
		return nil, err
	}
	m := d.msgs[t]
	if m == nil {
		m = New(t)
		d.msgs[t] = m
	}
	if err := m.DecodeOpts(p, d.Opts); err != nil {
		return nil, err
	}
	return m, nil
}
