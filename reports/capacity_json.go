package reports

import "io"

func init() {
	registerCapacity("json", "write the search as JSON to `FILE`", func(w io.Writer, c *Capacity) error { return WriteJSON(w, c) })
}
