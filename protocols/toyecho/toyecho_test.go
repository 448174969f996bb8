package toyecho_test

import (
	"bytes"
	"context"
	"flag"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/conformance"
	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/internal/repocheck"
	_ "github.com/lobbybench/lobbybench/protocols/all"
	"github.com/lobbybench/lobbybench/protocols/toyecho"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
)

// toyScenario is a short closed-model toy run against the embedded server.
const toyScenario = `protocol: toy-echo
echo_payload: hello
load: {clients: 4, duration: 1s}
flows: [{steps: [{echo: {count: 5, interval: 10ms}}]}]
`

// TestScenario: a toy scenario loads with the toy's own key parsed into
// its options, which run's --echo-payload overrides; the toy's key in
// another protocol's scenario, and another's in the toy's, are errors
// naming the file and line.
func TestScenario(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		flags      []string
		want       string // Describe of the options, or the error
	}{
		{"own key", toyScenario, nil, `, payload "hello"`},
		{"default payload", strings.Replace(toyScenario, "echo_payload: hello\n", "", 1), nil, `, payload "toy"`},
		{"run flag", toyScenario, []string{"--echo-payload", "again"}, `, payload "again"`},
		{"empty payload", strings.Replace(toyScenario, "hello", `""`, 1), nil, `t.yaml:2: echo_payload: 0 bytes, want 1-512`},
		{"in a udp-lobby scenario", strings.Replace(toyScenario, "toy-echo", "udp-lobby", 1), nil,
			"t.yaml:2: echo_payload applies to toy-echo only, not udp-lobby"},
		{"another protocol's key", strings.Replace(toyScenario, "echo_payload: hello", "header_profile: spec", 1), nil,
			"t.yaml:2: header_profile applies to udp-lobby only, not toy-echo"},
		{"flag on udp-lobby", strings.NewReplacer("toy-echo", "udp-lobby", "echo_payload: hello\n", "", "{echo: {count: 5, interval: 10ms}}", "list_rooms").Replace(toyScenario),
			[]string{"--echo-payload", "x"}, "--echo-payload applies to toy-echo only, not udp-lobby"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := scenario.Parse("t.yaml", []byte(tc.yaml))
			if err == nil {
				fs := flag.NewFlagSet("run", flag.ContinueOnError)
				pf := scenario.AddProtocolFlags(fs)
				if err := fs.Parse(tc.flags); err != nil {
					t.Fatal(err)
				}
				err = p.Apply(scenario.Overrides{Protocol: pf})
			}
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = p.Options.Describe()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRun: run plays a toy scenario against the toy's embedded server part
// (the run starts it, as for any protocol), every request answered, and
// the part's counters are in the result.
func TestRun(t *testing.T) {
	plan, err := scenario.Parse("toy.yaml", []byte(toyScenario))
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Config{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := res.Step("echo")
	if !ok || st.Successes < 5 || st.Failures != 0 {
		t.Fatalf("echo step %+v", st)
	}
	if !res.Engine.Embedded || res.Engine.Server == nil {
		t.Fatal("no embedded server")
	}
	served := refserver.PartStats[toyecho.Stats](res.Engine.Server.Stats, toyecho.Name)
	if served == nil || served.Requests < uint64(st.Successes) {
		t.Errorf("the embedded server's counters %+v, the run's successes %d", served, st.Successes)
	}
}

// badEcho answers every datagram with a reply carrying id 7 and the wrong
// payload: both toy cases catch it.
func badEcho(t *testing.T) netip.AddrPort {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			seq := []byte{0, 7}
			if n >= 6 {
				seq = buf[4:6]
			}
			c.WriteToUDPAddrPort(append(append([]byte("TOYA"), seq...), "wrong"...), from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// conformRows are TestConform's servers (nil: the toy's reference part)
// and the verdict each wants of each case. The toy's fault rows live here,
// with the toy, not in the conformance package: TestFaultCoverage holds its
// cases to them.
var conformRows = []struct {
	name   string
	server func(*testing.T) netip.AddrPort
	want   map[string]string
}{
	{"reference part", nil, map[string]string{"toy-echo/1/1": result.VerdictPass, "toy-echo/1/2": result.VerdictPass}},
	{"broken echo", badEcho, map[string]string{"toy-echo/1/1": result.VerdictFail, "toy-echo/1/2": result.VerdictWarn}},
}

// TestFaultCoverage: every toy case is proven by a row of TestConform that
// needs it to fail or warn.
func TestFaultCoverage(t *testing.T) {
	rows := conformance.FaultRows{}
	for _, r := range conformRows {
		rows.Wanted("TestConform/"+r.name, r.want)
	}
	for _, e := range conformance.FaultCoverage(rows, nil, toyecho.Name) {
		t.Error(e)
	}
}

// TestConform: the toy's cases are listed as conform --list lists them, and
// run against the toy's server part (pass) and a broken echo (fail, warn).
func TestConform(t *testing.T) {
	cs := conformance.Cases(toyecho.Name)
	var list bytes.Buffer
	if err := conformance.WriteList(&list, cs); err != nil || len(cs) != 2 || !strings.Contains(list.String(), "toy-echo/1/1") {
		t.Fatalf("cases %d, list:\n%s", len(cs), list.String())
	}
	cfg, err := refserver.Loopback().Only(toyecho.Name)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range conformRows {
		t.Run(tc.name, func(t *testing.T) {
			target := srv.Addr(toyecho.Name)
			if tc.server != nil {
				target = tc.server(t)
			}
			rep, err := conformance.Run(context.Background(), conformance.Config{Target: target.String(), Protocol: toyecho.Name, Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range rep.Cases {
				if c.Verdict != tc.want[c.ID] {
					t.Errorf("%s: %s (%s), want %s", c.ID, c.Verdict, c.Actual, tc.want[c.ID])
				}
			}
		})
	}
}

// TestServeFlags: serve's flags include the toy part's, which make its
// configuration, and the part runs alone.
func TestServeFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	build := refserver.ServeFlags(fs)
	for _, name := range []string{"toy-echo-addr", "toy-echo-delay", "no-toy-echo"} {
		if fs.Lookup(name) == nil {
			t.Errorf("serve has no --%s", name)
		}
	}
	if err := fs.Parse(append([]string{"--toy-echo-addr", "127.0.0.1:0"}, refserver.OffFlags(toyecho.Name)...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := build()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if got := srv.Announce(); len(got) != 1 || !strings.HasPrefix(got[0], "toy echo server on 127.0.0.1:") {
		t.Errorf("Announce = %q", got)
	}
}

// TestOneLine builds lobbybench with the build tag lobbybench_toy, under
// which protocols/all/toy.go adds the one line that imports this package,
// and finds the toy in run, conform --list and serve --help: nothing else
// of the repository changes for it.
func TestOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root, err := repocheck.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lobbybench")
	build := exec.Command("go", "build", "-tags", "lobbybench_toy", "-o", bin, "./cmd/lobbybench")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sc := filepath.Join(dir, "toy.yaml")
	if err := os.WriteFile(sc, []byte(toyScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"conform", "--list", "--protocol", "toy-echo"}, []string{"toy-echo/1/1", "toy-echo/1/2"}},
		{[]string{"conform", "--help"}, []string{"protocol: " + strings.Join(slices.Sorted(slices.Values(scenario.ProtocolNames())), ", ")}},
		{[]string{"serve", "--help"}, []string{"--toy-echo-addr address", "--no-toy-echo", "--udp-lobby-addr"}},
		{[]string{"run", "--help"}, []string{"--echo-payload"}},
		{[]string{"run", sc, "--echo-payload", "from-flag"}, []string{"Run: toy-echo, closed model", "toy-echo: requests="}},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("lobbybench %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("lobbybench %s: no %q in\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
}

// TestNamedOnlyHere: no Go file of the repository outside this package
// names the toy protocol (imports it or spells its name) but the one line
// that links it under the build tag lobbybench_toy.
func TestNamedOnlyHere(t *testing.T) {
	root, err := repocheck.Root()
	if err != nil {
		t.Fatal(err)
	}
	files, err := repocheck.GoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	found, err := repocheck.NamedOutside(root, files, repocheck.Ownership{Name: toyecho.Name, Own: []string{"protocols/toyecho"},
		Allowed: map[string]string{"protocols/all/toy.go": "links the toy under the build tag lobbybench_toy, for the tests only"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}
