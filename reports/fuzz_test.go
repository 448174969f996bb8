package reports

import (
	"bytes"
	"testing"

	"github.com/lobbybench/lobbybench/result"
)

// FuzzRead feeds untrusted result files to Read and, for runs, to Merge
// and every renderer: none may panic.
func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	_ = WriteJSON(&b, sampleRun(f))
	f.Add(b.Bytes())
	b.Reset()
	_ = WriteJSON(&b, sampleConform())
	f.Add(b.Bytes())
	f.Add([]byte(`{"schema_version":1,"kind":"run","steps":[{"name":"x","latency":{"count":1,"hist":"HISTFAAAAB"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := result.Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		switch d := v.(type) {
		case *result.Run:
			_, _ = result.Merge(d, d)
			_, _ = result.Compare(d, d, result.DefaultGates())
			_ = WriteRunTable(&bytes.Buffer{}, d)
			_ = WriteRunJUnit(&bytes.Buffer{}, d)
		case *result.Conform:
			_, _ = result.CompareConform(d, d, result.DefaultGates())
			_ = WriteConformJUnit(&bytes.Buffer{}, d)
			_ = WriteConformMarkdown(&bytes.Buffer{}, d)
		}
	})
}
