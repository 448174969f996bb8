package reports

import (
	"io"

	"github.com/lobbybench/lobbybench/result"
)

func init() {
	registerCapacity("json", "write the search as JSON to `FILE`", WriteCapacityJSON)
}

// WriteCapacityJSON writes c as JSON, led by its headline (status and
// verdict).
func WriteCapacityJSON(w io.Writer, c *result.Capacity) error {
	return WriteJSON(w, c)
}
