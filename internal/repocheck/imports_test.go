package repocheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path; rules name packages relative to it.
const module = "github.com/lobbybench/lobbybench"

// listedPkg is what the import rules need of one `go list -deps -json` entry.
type listedPkg struct {
	ImportPath string
	Name       string
	Standard   bool
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// pkgGraph is the module's packages and everything they link, by import path.
type pkgGraph map[string]listedPkg

// own reports whether path is a package of the module, and its path
// relative to the module ("protocols/udplobby/udpwire").
func own(path string) (string, bool) {
	if rel, ok := strings.CutPrefix(path, module+"/"); ok {
		return rel, true
	}
	return "", false
}

// under reports whether rel is dir or below it.
func under(rel string, dirs ...string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// importRule is one rule of the package layering, checked on the code that
// goes into the binaries (tests may import more).
type importRule struct {
	rule string
	// applies says whether the rule binds the module package rel.
	applies func(rel string) bool
	// forbidden says whether the package may not link dep, directly or not.
	forbidden func(dep listedPkg) bool
	// example is one import that breaks the rule (importer, imported):
	// TestImportRulesCatch proves the rule would catch it.
	example [2]string
}

// ownBut forbids every package of the module outside dirs.
func ownBut(dirs ...string) func(listedPkg) bool {
	return func(d listedPkg) bool {
		rel, ok := own(d.ImportPath)
		return ok && !under(rel, dirs...)
	}
}

// ownIn forbids the module's packages under dirs.
func ownIn(dirs ...string) func(listedPkg) bool {
	return func(d listedPkg) bool {
		rel, ok := own(d.ImportPath)
		return ok && under(rel, dirs...)
	}
}

func in(dirs ...string) func(string) bool {
	return func(rel string) bool { return under(rel, dirs...) }
}

// isPart reports whether rel is, or is below, one of a protocol's packages
// of one of kinds: protocols/<name>/<prefix><kind>, as the codec
// "protocols/udplobby/udpwire" is the udp-lobby's "wire".
func isPart(rel string, kinds ...string) bool {
	e := strings.Split(rel, "/")
	if len(e) < 3 || e[0] != "protocols" {
		return false
	}
	for _, k := range kinds {
		if strings.HasSuffix(e[2], k) {
			return true
		}
	}
	return false
}

// part binds a protocol's packages of kinds (see isPart).
func part(kinds ...string) func(string) bool {
	return func(rel string) bool { return isPart(rel, kinds...) }
}

// ownPart forbids a protocol's packages of kinds (see isPart).
func ownPart(kinds ...string) func(listedPkg) bool {
	return func(d listedPkg) bool {
		rel, ok := own(d.ImportPath)
		return ok && isPart(rel, kinds...)
	}
}

// either binds what any of fs binds.
func either(fs ...func(string) bool) func(string) bool {
	return func(rel string) bool {
		for _, f := range fs {
			if f(rel) {
				return true
			}
		}
		return false
	}
}

// anyOf forbids what any of fs forbids.
func anyOf(fs ...func(listedPkg) bool) func(listedPkg) bool {
	return func(d listedPkg) bool {
		for _, f := range fs {
			if f(d) {
				return true
			}
		}
		return false
	}
}

var importRules = []importRule{{
	// The codecs are the contract: self-contained, fuzzable and reusable
	// on their own.
	rule:      "a codec (protocols/*/*wire) imports only the standard library",
	applies:   part("wire"),
	forbidden: func(d listedPkg) bool { return !d.Standard },
	example:   [2]string{"protocols/tcplobby/tcpwire", "go.yaml.in/yaml/v3"},
}, {
	// Scripted steps are the scenario's, the clients' and the suite's
	// alike: the shared part names no protocol and depends on none of
	// them, so that each can play a script through a protocol's catalog.
	rule:      "script imports nothing of the module",
	applies:   in("script"),
	forbidden: ownBut("script"),
	example:   [2]string{"script", "scenario"},
}, {
	rule:      "nothing outside cmd/ imports cmd/...",
	applies:   func(rel string) bool { return !under(rel, "cmd") },
	forbidden: ownIn("cmd"),
	example:   [2]string{"engine", "cmd/lobbybench"},
}, {
	// The Leviathan connection engine is shared by the client and the
	// server, so it sits beneath both.
	rule:      "levconn imports only Leviathan's codec and internal/... of the module",
	applies:   in("protocols/leviathan/levconn"),
	forbidden: ownBut("protocols/leviathan/levconn", "protocols/leviathan/levwire", "internal"),
	example:   [2]string{"protocols/leviathan/levconn", "protocols/leviathan/levserver"},
}, {
	// result is the model that run, conform, capacity and `report
	// merge/compare` read and write, and judge by; it depends on none of
	// them, and on no renderer.
	rule:      "result imports nothing of the module but internal/...",
	applies:   in("result"),
	forbidden: ownBut("result", "internal"),
	example:   [2]string{"result", "reports"},
}, {
	// The renderers lay out the model; they judge nothing themselves.
	rule:      "reports imports nothing of the module but result and internal/...",
	applies:   in("reports"),
	forbidden: ownBut("reports", "result", "internal"),
	example:   [2]string{"reports", "engine"},
}, {
	// What measures, plays or judges a server needs the model, not its
	// renderings: a format is chosen and written by cmd/ alone.
	rule:      "metrics, scenario, simclient, protocols/..., liveness, conformance, engine and capacity import no renderer (reports)",
	applies:   in("metrics", "scenario", "simclient", "protocols", "liveness", "conformance", "engine", "capacity"),
	forbidden: ownIn("reports"),
	example:   [2]string{"engine", "reports"},
}, {
	// Liveness tells refused from silent from the error alone, the same
	// way for every protocol, beneath both run and conform.
	rule:      "liveness names no protocol: it imports only result and internal/... of the module",
	applies:   in("liveness"),
	forbidden: ownBut("liveness", "result", "internal"),
	example:   [2]string{"liveness", "protocols/udplobby/udpwire"},
}, {
	// The recorder counts keys and latencies; it knows no protocol,
	// scenario or client.
	rule:      "metrics imports only result and internal/... of the module",
	applies:   in("metrics"),
	forbidden: ownBut("metrics", "result", "internal"),
	example:   [2]string{"metrics", "scenario"},
}, {
	// The suite judges a server by what it sends: code shared with the
	// reference server could hide the very bug a case looks for, and the
	// suite keeps its own sockets rather than the load harness's.
	rule:      "conformance and the cases (protocols/*/*cases) share no code with the reference server, the clients or the engine",
	applies:   either(in("conformance"), part("cases")),
	forbidden: anyOf(ownIn("refserver", "simclient", "engine"), ownPart("server", "client")),
	example:   [2]string{"protocols/udplobby/udpcases", "protocols/udplobby/udpserver"},
}, {
	// The server under test shares only the codecs with what measures it.
	rule:      "refserver and the server parts (protocols/*/*server) import none of simclient, engine, conformance, metrics, liveness, the clients or the cases",
	applies:   either(in("refserver"), part("server")),
	forbidden: anyOf(ownIn("simclient", "engine", "conformance", "metrics", "liveness"), ownPart("client", "cases")),
	example:   [2]string{"protocols/udplobby/udpserver", "metrics"},
}, {
	// A scenario is parsed and validated without the code that plays it;
	// protocols register their step kinds with it from their descriptors.
	rule:      "scenario imports none of simclient, engine, conformance, refserver, metrics",
	applies:   in("scenario"),
	forbidden: ownIn("simclient", "engine", "conformance", "refserver", "metrics"),
	example:   [2]string{"scenario", "simclient"},
}, {
	rule:      "simclient and the clients (protocols/*/*client) are driven by the engine and import neither it, conformance nor the cases",
	applies:   either(in("simclient"), part("client")),
	forbidden: anyOf(ownIn("engine", "conformance"), ownPart("cases")),
	example:   [2]string{"protocols/udplobby/udpclient", "engine"},
}, {
	// A protocol is its folder plus one line in protocols/all: only the
	// programs link the list (and tests), so that nothing else grows a
	// dependency on which protocols there are.
	rule: "only the programs (cmd/..., tools/... and the e2e programs) import protocols/...",
	applies: func(rel string) bool {
		return !under(rel, "cmd", "protocols", "tools", "deploy/e2e", "internal/testkit")
	},
	forbidden: ownIn("protocols"),
	example:   [2]string{"engine", "protocols/all"},
}, {
	// A fake speaks a protocol through its codec alone, so that it shares
	// no code with the client it fools or the server it stands in for.
	// protocols/stepkit, the step kinds' shared parameter types, is part
	// of no protocol (the bundled flows' kit reads a series' interval).
	rule:    "internal/testkit imports no part of a protocol but its codec",
	applies: in("internal/testkit"),
	forbidden: func(d listedPkg) bool {
		return ownIn("protocols")(d) && !ownPart("wire")(d) && d.ImportPath != module+"/protocols/stepkit"
	},
	example: [2]string{"internal/testkit/caplobby", "protocols/udplobby/udpserver"},
}, {
	// The test kit's fakes speak a protocol, so they may import its codec.
	// The helpers sit beneath everything, the result model too: what
	// they measure, the caller turns into the model.
	rule:      "internal/... imports only internal/... of the module (internal/testkit aside)",
	applies:   func(rel string) bool { return under(rel, "internal") && !under(rel, "internal/testkit") },
	forbidden: ownBut("internal"),
	example:   [2]string{"internal/owned", "result"},
}, {
	// The generic cores name no protocol: a program or a fake that needs a
	// codec lives under tools/ or internal/testkit, not beside them.
	rule:      "engine, capacity, liveness, metrics, scenario, result, reports and dashboard import no codec (protocols/*/*wire)",
	applies:   in("engine", "capacity", "liveness", "metrics", "scenario", "result", "reports", "dashboard"),
	forbidden: ownPart("wire"),
	example:   [2]string{"capacity", "protocols/udplobby/udpwire"},
}, {
	// testing in a binary bloats it, internal/golden registers an -update
	// flag, and internal/testkit holds fakes: all are for tests only. The
	// test helpers (golden files, the repository's checks, the fakes and
	// the test terminal of internal/testkit) may use testing.
	rule:    "only tests import testing, internal/golden and internal/testkit",
	applies: func(rel string) bool { return !under(rel, "internal/golden", "internal/repocheck", "internal/testkit") },
	forbidden: func(d listedPkg) bool {
		rel, ok := own(d.ImportPath)
		return d.ImportPath == "testing" || strings.HasPrefix(d.ImportPath, "testing/") || ok && under(rel, "internal/golden", "internal/testkit")
	},
	example: [2]string{"engine", "testing"},
}}

// importChain returns the shortest chain of imports from pkg to dep
// ("a → b → dep"), for the failure message.
func importChain(g pkgGraph, pkg, dep string) string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == dep {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, strings.TrimPrefix(p, module+"/"))
			}
			slices.Reverse(chain)
			return strings.Join(chain, " → ")
		}
		for _, q := range g[p].Imports {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return strings.TrimPrefix(pkg, module+"/") + " → … → " + dep
}

// checkImports returns one line per rule broken: the rule and the import
// chain that breaks it. A package is named only when none of its imports
// bound by the same rule links the same forbidden package, so one bad import
// is reported where it is made, not again by every package above it.
func checkImports(g pkgGraph) []string {
	links := func(path, dep string) bool { return slices.Contains(g[path].Deps, dep) }
	bound := func(r importRule, path string) bool {
		rel, ok := own(path)
		return ok && r.applies(rel)
	}
	var out []string
	for _, path := range slices.Sorted(maps.Keys(g)) {
		for _, r := range importRules {
			if !bound(r, path) {
				continue
			}
			for _, dep := range g[path].Deps {
				if !r.forbidden(g[dep]) {
					continue
				}
				inner := slices.ContainsFunc(g[path].Imports, func(q string) bool {
					return q != dep && bound(r, q) && links(q, dep)
				})
				if !inner {
					out = append(out, r.rule+": "+importChain(g, path, dep))
				}
			}
		}
	}
	return out
}

// listPackages runs `go list -deps -json` over the module for goos.
func listPackages(t *testing.T, goos string) pkgGraph {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Name,Standard,Imports,Deps,Error", module+"/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v\n%s", goos, err, stderr.Bytes())
	}
	g := pkgGraph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list for %s: %v", goos, err)
		}
		if p.Error != nil {
			t.Fatalf("go list for %s: %s: %s", goos, p.ImportPath, p.Error.Err)
		}
		g[p.ImportPath] = p
	}
	if _, ok := g[module+"/cmd/lobbybench"]; !ok {
		t.Fatalf("go list for %s listed no %s/cmd/lobbybench: %d packages", goos, module, len(g))
	}
	return g
}

// TestImports checks the layering of the packages on every platform the
// release is built for (build tags can add imports on one of them).
func TestImports(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			for _, v := range checkImports(listPackages(t, goos)) {
				t.Error(v)
			}
		})
	}
}

// unregistered lists the module's programs (package main) that link the
// scenario loader but not protocols/all: they would refuse every
// scenario ("no protocol is registered in this program"), and only when
// run, as the Kubernetes end-to-end's verifier once did.
func unregistered(g pkgGraph) []string {
	var out []string
	for path, p := range g {
		if _, ok := own(path); !ok || p.Name != "main" {
			continue
		}
		if slices.Contains(p.Deps, module+"/scenario") && !slices.Contains(p.Deps, module+"/protocols/all") {
			out = append(out, path+" links scenario but not protocols/all: it knows no protocol")
		}
	}
	slices.Sort(out)
	return out
}

// TestProgramsRegisterProtocols: every program that loads scenarios
// links every protocol.
func TestProgramsRegisterProtocols(t *testing.T) {
	for _, v := range unregistered(listPackages(t, "linux")) {
		t.Error(v)
	}
}

// TestUnregisteredCatches: the check names a program that links the
// scenario loader without protocols/all, and only it.
func TestUnregisteredCatches(t *testing.T) {
	g := pkgGraph{
		module + "/cmd/good":      {Name: "main", Deps: []string{module + "/scenario", module + "/protocols/all"}},
		module + "/cmd/bad":       {Name: "main", Deps: []string{module + "/scenario"}},
		module + "/cmd/noscen":    {Name: "main", Deps: []string{module + "/protocols/udplobby/udpwire"}},
		module + "/engine":        {Name: "engine", Deps: []string{module + "/scenario"}},
		module + "/protocols/all": {Name: "all"},
	}
	got := unregistered(g)
	if len(got) != 1 || !strings.HasPrefix(got[0], module+"/cmd/bad ") {
		t.Errorf("unregistered = %q, want only cmd/bad", got)
	}
}

// TestImportRulesCatch proves that each rule fails on the import its
// example names, added to a graph that otherwise breaks no rule: a rule that
// cannot fail is no check.
func TestImportRulesCatch(t *testing.T) {
	for _, r := range importRules {
		t.Run(r.rule, func(t *testing.T) {
			from, to := module+"/"+r.example[0], r.example[1]
			if rel, _ := own(from); !r.applies(rel) {
				t.Fatalf("example importer %s is not bound by the rule", r.example[0])
			}
			// The examples name the standard library's testing, a third-party
			// module (a dot in its first element) or a package of the module.
			std := to == "testing" || strings.HasPrefix(to, "testing/")
			if !std && !strings.Contains(strings.Split(to, "/")[0], ".") {
				to = module + "/" + to
			}
			g := graph(map[string][]string{from: {"fmt"}, "fmt": nil, to: nil}, "fmt", "testing")
			if std {
				g[to] = listedPkg{ImportPath: to, Standard: true}
			}
			if got := checkImports(g); len(got) != 0 {
				t.Fatalf("the graph without the example import breaks rules: %q", got)
			}
			g = graph(map[string][]string{from: {"fmt", to}, "fmt": nil, to: nil}, "fmt", "testing")
			var mine []string
			for _, v := range checkImports(g) {
				if strings.HasPrefix(v, r.rule+": ") {
					mine = append(mine, v)
				}
			}
			want := r.rule + ": " + r.example[0] + " → " + strings.TrimPrefix(to, module+"/")
			if len(mine) != 1 || mine[0] != want {
				t.Errorf("violations of the rule = %q, want [%q]", mine, want)
			}
		})
	}
}

// graph builds a pkgGraph from each package's imports, with Deps filled in
// as go list does (transitively); the paths in std are standard.
func graph(imports map[string][]string, std ...string) pkgGraph {
	g := pkgGraph{}
	var deps func(p string, seen map[string]bool)
	deps = func(p string, seen map[string]bool) {
		for _, q := range imports[p] {
			if !seen[q] {
				seen[q] = true
				deps(q, seen)
			}
		}
	}
	for p, imps := range imports {
		seen := map[string]bool{}
		deps(p, seen)
		g[p] = listedPkg{ImportPath: p, Standard: slices.Contains(std, p), Imports: imps, Deps: slices.Sorted(maps.Keys(seen))}
	}
	return g
}

// TestCheckImportsWhere checks that a violation is reported once, by the
// innermost package the rule binds, with the chain through packages it does
// not bind.
func TestCheckImportsWhere(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	for _, tc := range []struct {
		name    string
		imports map[string][]string
		want    []string
	}{{
		name: "reported where it is made, not by the importers above",
		imports: map[string][]string{
			m("cmd/lobbybench"): {m("engine")},
			m("engine"):         {m("metrics")},
			m("metrics"):        {"testing"},
			"testing":           nil,
		},
		want: []string{"only tests import testing, internal/golden and internal/testkit: metrics → testing"},
	}, {
		name: "through a package the rule does not bind",
		imports: map[string][]string{
			m("protocols/udplobby/udpwire"): {m("internal/mid")},
			m("internal/mid"):               {"go.yaml.in/yaml/v3"},
			"go.yaml.in/yaml/v3":            nil,
		},
		want: []string{"a codec (protocols/*/*wire) imports only the standard library: protocols/udplobby/udpwire → internal/mid",
			"a codec (protocols/*/*wire) imports only the standard library: protocols/udplobby/udpwire → internal/mid → go.yaml.in/yaml/v3"},
	}, {
		name: "three rules broken by one import",
		imports: map[string][]string{
			m("liveness"):                   {m("protocols/udplobby/udpwire")},
			m("protocols/udplobby/udpwire"): nil,
		},
		want: []string{"liveness names no protocol: it imports only result and internal/... of the module: liveness → protocols/udplobby/udpwire",
			"only the programs (cmd/..., tools/... and the e2e programs) import protocols/...: liveness → protocols/udplobby/udpwire",
			"engine, capacity, liveness, metrics, scenario, result, reports and dashboard import no codec (protocols/*/*wire): liveness → protocols/udplobby/udpwire"},
	}, {
		name: "allowed imports",
		imports: map[string][]string{
			m("cmd/lobbybench"):               {m("engine"), m("liveness"), m("reports"), m("protocols/udplobby/udpclient")},
			m("reports"):                      {m("result"), m("internal/words")},
			m("engine"):                       {m("metrics"), m("simclient")},
			m("simclient"):                    {m("scenario")},
			m("protocols/udplobby/udpclient"): {m("simclient"), m("protocols/udplobby/udpwire")},
			m("scenario"):                     {m("internal/owned")},
			m("internal/owned"):               {m("internal/words")},
			m("liveness"):                     {m("result")},
			m("metrics"):                      {m("result")},
			m("result"):                       {m("internal/words")},
			m("internal/words"):               {"fmt"},
			m("protocols/udplobby/udpwire"):   {"fmt"},
			m("tools/benchtruth"):             {m("engine"), m("protocols/all"), m("protocols/udplobby/udpwire")},
			m("protocols/all"):                {m("protocols/udplobby/udpclient")},
			m("internal/testkit/caplobby"):    {m("protocols/udplobby/udpwire")},
			"fmt":                             nil,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkImports(graph(tc.imports, "fmt", "testing"))
			if !slices.Equal(got, tc.want) {
				t.Errorf("violations\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
