//go:build lobbybench_toy

package all

// With the build tag lobbybench_toy, the toy protocol is linked as a
// fourth: `go test -tags lobbybench_toy ./...` runs the whole suite with a
// protocol no test names, proving that every list of the protocols in code
// and tests comes from the registries (see docs/testing.md).
import _ "github.com/lobbybench/lobbybench/protocols/toyecho"

func init() { Tags = append(Tags, "lobbybench_toy") }
