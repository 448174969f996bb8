package conformance

import (
	"errors"
	"testing"
)

// TestSilenceWords: what a silent wait saw is said, never "no reply" when
// the peer sent something: ReplyWords and SilenceDetail name the
// messages that came instead of the awaited one, with their bytes.
func TestSilenceWords(t *testing.T) {
	instead := Instead("ERROR_MSG within the timeout", []string{"ROOM_UPDATE"}, [][]byte{{0x09, 0x01}})
	for _, tt := range []struct {
		name         string
		err          error
		words, extra string
	}{
		{"plain silence", ErrSilence, "no reply", ""},
		{"another message", instead, "no ERROR_MSG within the timeout; instead it sent ROOM_UPDATE [09 01]", "; instead it sent ROOM_UPDATE [09 01]"},
		{"another error", errors.New("closed"), "no reply", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReplyWords(tt.err, "no reply"); got != tt.words {
				t.Errorf("ReplyWords = %q, want %q", got, tt.words)
			}
			if got := SilenceDetail(tt.err); got != tt.extra {
				t.Errorf("SilenceDetail = %q, want %q", got, tt.extra)
			}
		})
	}
}
