package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/engine"
	"github.com/lobbybench/lobbybench/reports"
	"github.com/lobbybench/lobbybench/result"
)

// TestWriteOutputs: every requested file is written whole (through a
// temporary file renamed into place, none left behind), one that fails
// is named by its flag and leaves nothing, and the others are written
// anyway.
func TestWriteOutputs(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer, reports.Options, ...result.Doc) error {
		return func(w io.Writer, _ reports.Options, _ ...result.Doc) error {
			_, err := io.WriteString(w, s)
			return err
		}
	}
	outs := testOutputs(
		reports.Format{Name: "json", Write: text("{}\n")}, filepath.Join(dir, "r.json"),
		reports.Format{Name: "junit", Write: func(io.Writer, reports.Options, ...result.Doc) error {
			t.Error("an output not asked for was rendered")
			return nil
		}}, "",
		reports.Format{Name: "markdown", Write: func(w io.Writer, _ reports.Options, _ ...result.Doc) error {
			io.WriteString(w, "half")
			return errors.New("renderer broke")
		}}, filepath.Join(dir, "r.md"),
		reports.Format{Name: "html", Write: text("<html>")}, filepath.Join(dir, "r.html"),
	)
	var errb bytes.Buffer
	e := &env{stdout: io.Discard, stderr: &errb}
	if err := outs.check(e); err != nil {
		t.Fatal(err)
	}
	if outs.write(e, "run", result.NewRun(), reports.Options{}) {
		t.Error("a failed output reported as written")
	}
	if got := errb.String(); got != "lobbybench run: --markdown: renderer broke\n" {
		t.Errorf("stderr %q", got)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "r.html r.json" {
		t.Errorf("directory holds %v, want r.html r.json (a temporary or half-written file left behind?)", names)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "r.html")); string(b) != "<html>" {
		t.Errorf("r.html = %q", b)
	}
}

// TestCheckOutputs: a path whose directory is missing, or not a
// directory, is an error naming the flag, found before anything runs; a
// good one leaves nothing behind.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing", "r.md"), "--markdown: directory of"},
		{filepath.Join(file, "r.md"), "--markdown: directory of"},
		{dir, "--markdown: " + strconv.Quote(dir) + " is a directory"},
		{dir + "/", "--markdown: " + strconv.Quote(dir+"/") + " is a directory"},
		{filepath.Join(dir, "r.md"), ""},
		{file, ""}, // an existing file is replaced
	} {
		err := testOutputs(reports.Format{Name: "markdown"}, tt.path).check(&env{})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the check left %d entries, want only f", len(ents))
	}
}

// testOutputs is outputs over the given formats, each followed by its
// path.
func testOutputs(fp ...any) *outputs {
	o := &outputs{}
	for i := 0; i < len(fp); i += 2 {
		path := fp[i+1].(string)
		o.formats = append(o.formats, fp[i].(reports.Format))
		o.paths = append(o.paths, &path)
	}
	return o
}

// TestOutputFlags: run and conform offer one flag per format of the
// registry, with the help the format gives for their kind of result.
func TestOutputFlags(t *testing.T) {
	for _, kind := range []string{result.KindRun, result.KindConform} {
		fs := flag.NewFlagSet(kind, flag.ContinueOnError)
		o := outputFlags(fs, kind)
		if err := fs.Parse([]string{"--json", "a.json", "--html", "b.html"}); err != nil {
			t.Fatal(err)
		}
		if o.path("json") != "a.json" || o.path("html") != "b.html" || o.path("junit") != "" {
			t.Errorf("%s: paths json %q html %q junit %q", kind, o.path("json"), o.path("html"), o.path("junit"))
		}
		for _, f := range reports.Formats() {
			fl := fs.Lookup(f.Name)
			if fl == nil || fl.Usage == "" || fl.Usage != f.Help[kind] {
				t.Errorf("%s: --%s missing or without its help", kind, f.Name)
			}
		}
	}
}

// TestCheckOutputsSamePath: two formats into one file (the same path after
// cleaning, "-" included) is a usage error naming both flags.
func TestCheckOutputsSamePath(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(dir, "r.x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		json, html string
		want       string // "" no error
	}{
		{"same path", filepath.Join(dir, "x"), filepath.Join(dir, "x"), "--json and --html both write"},
		{"same after cleaning", filepath.Join(dir, "x"), dir + "/./sub/../x", "--json and --html both write"},
		{"relative and absolute", rel, filepath.Join(dir, "r.x"), "--json and --html both write"},
		{"both stdout", "-", "-", "--json and --html both write to standard output (-)"},
		{"different files", filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html"), ""},
		{"one output", filepath.Join(dir, "r.json"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := testOutputs(reports.Format{Name: "json"}, tt.json, reports.Format{Name: "junit"}, "",
				reports.Format{Name: "html"}, tt.html).check(&env{})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("check() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWriteFileKeepsMode: a file replaced keeps its permissions; a new
// one is 0644.
func TestWriteFileKeepsMode(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		old  os.FileMode // 0: no file before
		want os.FileMode
	}{
		{"new", 0, 0o644},
		{"private", 0o600, 0o600},
		{"group", 0o640, 0o640},
		{"plain", 0o644, 0o644},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			if tt.old != 0 {
				if err := os.WriteFile(path, []byte("old"), tt.old); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.old); err != nil { // whatever the umask
					t.Fatal(err)
				}
			}
			if err := writeFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.want {
				t.Errorf("mode %v, want %v", got, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("content %q", b)
			}
		})
	}
}

// TestWriteFileRemovesStaleTemps: writing r.json removes the temporary
// files of r.json that an earlier process left (last modified before
// this one started), and nothing else: not one written since, not
// another output's, not a name only like ours.
func TestWriteFileRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	before := processStart.Add(-time.Hour)
	files := []struct {
		name  string
		stale bool // modified before the process began
		kept  bool
	}{
		{".r.json.123456.tmp", true, false},
		{".r.json.9.tmp", true, false},
		{".r.json.777.tmp", false, true}, // another writer's, now
		{".r.json.abc.tmp", true, true},
		{".r.json..tmp", true, true},
		{".other.json.123.tmp", true, true},
		{"r.json.123.tmp", true, true},
		{".r.json.123.tmp.bak", true, true},
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if f.stale {
			if err := os.Chtimes(p, before, before); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := writeFile(filepath.Join(dir, "r.json"), func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s kept %v, want %v", f.name, kept, f.kept)
		}
	}
}

// TestOutputsToStdout: a format given "-" writes to standard output,
// whole, and the command's own text (the run's table) goes to standard
// error, so that standard output parses; no file named "-" is made.
func TestOutputsToStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	outs := outputFlags(fs, result.KindRun)
	if err := fs.Parse([]string{"--json", "-"}); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if err := outs.check(e); err != nil {
		t.Fatal(err)
	}
	r := repRunOf(t, repSeq(200, 1, 100), 0)
	if code := reportRun(e, &engine.Result{Run: r, Engine: &engine.Info{}, ThresholdsOK: true}, outs); code != exitOK {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
	if _, err := result.ReadRun(bytes.NewReader(out.Bytes())); err != nil {
		t.Errorf("stdout is not a result document (%v):\n%s", err, out.String())
	}
	if !strings.Contains(errb.String(), "join") {
		t.Errorf("the table is not on stderr:\n%s", errb.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
}

// TestExitOutputNotWritten: a result file that cannot be written after
// the run (a full disk) is named on stderr and exits 9 when the run
// passed, never 2 (the paths were good when checked); a failed run keeps
// its own code.
func TestExitOutputNotWritten(t *testing.T) {
	broken := reports.Format{Name: "json", Write: func(io.Writer, reports.Options, ...result.Doc) error {
		return errors.New("write r.json: no space left on device")
	}}
	for _, tt := range []struct {
		name string
		ths  []result.ThresholdResult
		code int
	}{
		{"passed", nil, exitNotWritten},
		{"threshold breached", []result.ThresholdResult{{Name: "join.p99 < 1us", Metric: "join.p99", Op: "<", Limit: 1e-6, Observed: 0.1}}, exitThreshold},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outs := testOutputs(broken, filepath.Join(t.TempDir(), "r.json"))
			var out, errb bytes.Buffer
			e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			if err := outs.check(e); err != nil {
				t.Fatal(err)
			}
			r := repRunOf(t, repSeq(200, 1, 100), 0, tt.ths...)
			code := reportRun(e, &engine.Result{Run: r, Engine: &engine.Info{}, ThresholdsOK: tt.ths == nil}, outs)
			if code != tt.code || !strings.Contains(errb.String(), "lobbybench run: --json: write r.json: no space left on device") {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errb.String())
			}
		})
	}
}

// TestRunRefusesOutputDir: --json naming a directory is refused before
// anything runs (the target named is never reached), naming the flag.
func TestRunRefusesOutputDir(t *testing.T) {
	sc := writeScenario(t, shortRun)
	dir := t.TempDir()
	code, _, errs := runCLI(t, "run", "--target", "127.0.0.1:9", "--json", dir, sc)
	if code != exitUsage || !strings.Contains(errs, "--json: "+strconv.Quote(dir)+" is a directory") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
