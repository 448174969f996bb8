// Package waiting sets how many t.Parallel tests of a package run at once
// when the package's parallel tests mostly wait rather than compute.
//
// -parallel defaults to GOMAXPROCS, a fit for tests that use their CPU. A
// test that waits on a load's length, a timeout or a child process uses
// about a tenth of a core, so on a 2-core machine such tests would idle
// two by two. A package whose parallel tests all hold to that calls
// Parallel from its TestMain; an explicit -parallel on the command line
// still wins.
package waiting

import (
	"flag"
	"runtime"
	"strconv"
)

// Parallel parses the test flags and, unless -parallel was given, lets n
// parallel tests (at least GOMAXPROCS) run at once. Call it from TestMain
// before m.Run.
func Parallel(n int) {
	flag.Parse()
	if !given("test.parallel") {
		flag.Set("test.parallel", strconv.Itoa(max(runtime.GOMAXPROCS(0), n)))
	}
}

// given reports whether the flag name was set on the command line.
func given(name string) bool {
	found := false
	flag.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}
