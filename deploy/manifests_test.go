package deploy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Minimal typed views of the manifests: yaml.v3 with KnownFields rejects a
// misspelt key in the parts modelled here (the rest is kept as raw nodes).

type meta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		FieldRef struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type container struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	// ImagePullPolicy and RestartPolicy (a native sidecar's Always) are
	// set by the local overlay's patches only.
	ImagePullPolicy string    `yaml:"imagePullPolicy"`
	RestartPolicy   string    `yaml:"restartPolicy"`
	Command         []string  `yaml:"command"`
	Args            []string  `yaml:"args"`
	Env             []envVar  `yaml:"env"`
	Resources       yaml.Node `yaml:"resources"`
	Ports           []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
	SecurityContext *struct {
		RunAsUser    *int `yaml:"runAsUser"`
		Capabilities struct {
			Add []string `yaml:"add"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
}

type volume struct {
	Name                  string `yaml:"name"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
}

type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
	Spec       struct {
		CompletionMode          string `yaml:"completionMode"`
		Completions             *int   `yaml:"completions"`
		Parallelism             *int   `yaml:"parallelism"`
		BackoffLimit            *int   `yaml:"backoffLimit"`
		ActiveDeadlineSeconds   int    `yaml:"activeDeadlineSeconds"`
		TTLSecondsAfterFinished int    `yaml:"ttlSecondsAfterFinished"`
		Template                struct {
			Metadata meta `yaml:"metadata"`
			Spec     struct {
				RestartPolicy    string `yaml:"restartPolicy"`
				AutomountSAToken *bool  `yaml:"automountServiceAccountToken"`
				HostNetwork      *bool  `yaml:"hostNetwork"`
				SecurityContext  *struct {
					SeccompProfile struct {
						Type string `yaml:"type"`
					} `yaml:"seccompProfile"`
				} `yaml:"securityContext"`
				Affinity       yaml.Node   `yaml:"affinity"`
				InitContainers []container `yaml:"initContainers"`
				Containers     []container `yaml:"containers"`
				Volumes        []volume    `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type pvc struct {
	APIVersion string    `yaml:"apiVersion"`
	Kind       string    `yaml:"kind"`
	Metadata   meta      `yaml:"metadata"`
	Spec       yaml.Node `yaml:"spec"`
}

type configMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   meta              `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

func decodeStrict(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: want one document, found more (%v)", path, err)
	}
}

// yamlFiles lists every YAML file under kubernetes/.
func yamlFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEveryYAMLParses parses every YAML file we ship for deployment.
func TestEveryYAMLParses(t *testing.T) {
	files := append(yamlFiles(t), "../.github/workflows/nightly.yml")
	if len(files) < 12 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if len(v) == 0 {
			t.Errorf("%s is empty", f)
		}
	}
}

func envOf(c container) map[string]envVar {
	m := map[string]envVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// TestShardJob checks the Indexed Job and the merge Job agree with each
// other, with the volume claim and the scenario config map.
func TestShardJob(t *testing.T) {
	var shards, merge job
	var claim pvc
	var cm configMap
	decodeStrict(t, "kubernetes/shards/shards-job.yaml", &shards)
	decodeStrict(t, "kubernetes/merge/merge-job.yaml", &merge)
	decodeStrict(t, "kubernetes/shards/results-pvc.yaml", &claim)
	decodeStrict(t, "kubernetes/shards/scenario-configmap.yaml", &cm)

	if shards.APIVersion != "batch/v1" || shards.Kind != "Job" || shards.Spec.CompletionMode != "Indexed" {
		t.Errorf("shards: %s %s completionMode %q, want an Indexed batch/v1 Job", shards.APIVersion, shards.Kind, shards.Spec.CompletionMode)
	}
	if shards.Spec.Completions == nil || shards.Spec.Parallelism == nil || *shards.Spec.Completions != *shards.Spec.Parallelism || *shards.Spec.Completions < 2 {
		t.Fatalf("completions %v and parallelism %v must be set, equal and ≥ 2", shards.Spec.Completions, shards.Spec.Parallelism)
	}
	n := *shards.Spec.Completions
	for name, j := range map[string]job{"shards": shards, "merge": merge} {
		if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
			t.Errorf("%s: backoffLimit must be 0 (a retried shard sends its load twice)", name)
		}
		if j.Spec.Template.Spec.RestartPolicy != "Never" {
			t.Errorf("%s: restartPolicy %q, want Never", name, j.Spec.Template.Spec.RestartPolicy)
		}
		if len(j.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("%s: want one container", name)
		}
		claims := 0
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				claims++
				if v.PersistentVolumeClaim.ClaimName != claim.Metadata.Name {
					t.Errorf("%s: claim %q, want %q", name, v.PersistentVolumeClaim.ClaimName, claim.Metadata.Name)
				}
			}
			if v.ConfigMap != nil && v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("%s: config map %q, want %q", name, v.ConfigMap.Name, cm.Metadata.Name)
			}
		}
		if claims != 1 {
			t.Errorf("%s: %d volume claims, want 1", name, claims)
		}
		mounts := map[string]string{}
		for _, m := range j.Spec.Template.Spec.Containers[0].VolumeMounts {
			mounts[m.Name] = m.MountPath
		}
		for _, v := range j.Spec.Template.Spec.Volumes {
			if _, ok := mounts[v.Name]; !ok {
				t.Errorf("%s: volume %s is not mounted", name, v.Name)
			}
		}
		if mounts["results"] != "/results" {
			t.Errorf("%s: results mounted at %q", name, mounts["results"])
		}
		// One container name, so the local overlay's one patch fits both Jobs.
		if c := j.Spec.Template.Spec.Containers[0]; c.Name != "lobbybench" {
			t.Errorf("%s: container %q, want lobbybench", name, c.Name)
		}
		checkRequests(t, name, j.Spec.Template.Spec.Containers[0].Resources)
	}

	sc := shards.Spec.Template.Spec.Containers[0]
	env := envOf(sc)
	idx := env["SHARD_INDEX"]
	if idx.ValueFrom == nil || idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("SHARD_INDEX must come from the job-completion-index annotation (JOB_COMPLETION_INDEX), got %+v", idx)
	}
	if f, ok := env["FLOWS"]; !ok || f.Value != "" {
		t.Errorf("shards: FLOWS %+v, want declared and empty (the scenario's flows_mode; ../virtual sets virtual)", f)
	}
	if env["SHARD_COUNT"].Value != strconv.Itoa(n) {
		t.Errorf("shards: SHARD_COUNT %q, want %d (= completions)", env["SHARD_COUNT"].Value, n)
	}
	if got := envOf(merge.Spec.Template.Spec.Containers[0])["SHARD_COUNT"].Value; got != strconv.Itoa(n) {
		t.Errorf("merge: SHARD_COUNT %q, want %d", got, n)
	}
	script := strings.Join(sc.Args, " ")
	for _, want := range []string{`--shard "$(SHARD_INDEX)/$(SHARD_COUNT)"`, `--json "/results/shard-$(SHARD_INDEX).json"`, "/scenario/scenario.yaml", `--target "$(TARGET)"`,
		`--metrics-addr "$(METRICS_ADDR)"`, `--serve-linger "$(METRICS_LINGER)"`, `${FLOWS:+--flows "$FLOWS"}`} {
		if !strings.Contains(script, want) {
			t.Errorf("shard script lacks %s:\n%s", want, script)
		}
	}
	mscript := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"report merge /results/shard-*.json -o /results/merged.json", "report html /results/merged.json", "report junit /results/merged.json"} {
		if !strings.Contains(mscript, want) {
			t.Errorf("merge script lacks %q:\n%s", want, mscript)
		}
	}
	// Kubernetes expands $(NAME) in args; a shell $( ) must be escaped as $$( ).
	for name, s := range map[string]string{"shards": script, "merge": mscript} {
		for _, m := range regexp.MustCompile(`\$\(([^)]*)\)`).FindAllStringSubmatch(strings.ReplaceAll(s, "$$(", ""), -1) {
			if _, ok := map[string]bool{"SHARD_INDEX": true, "SHARD_COUNT": true, "TARGET": true, "METRICS_ADDR": true, "METRICS_LINGER": true}[m[1]]; !ok {
				t.Errorf("%s: $(%s) is neither a declared variable nor escaped as $$(", name, m[1])
			}
		}
	}
	if _, ok := cm.Data["scenario.yaml"]; !ok {
		t.Error("config map lacks scenario.yaml")
	}
}

// metricsPort is the shard Job's metrics port: METRICS_ADDR's, which must
// be the container port named metrics.
func metricsPort(t *testing.T, shards job) int {
	t.Helper()
	c := shards.Spec.Template.Spec.Containers[0]
	addr := envOf(c)["METRICS_ADDR"].Value
	_, p, ok := strings.Cut(addr, ":")
	port, err := strconv.Atoi(p)
	if !ok || err != nil {
		t.Fatalf("shards: METRICS_ADDR %q is not [host]:port", addr)
	}
	named := 0
	for _, cp := range c.Ports {
		if cp.Name == "metrics" {
			named = cp.ContainerPort
		}
	}
	if named != port {
		t.Errorf("shards: container port metrics %d, METRICS_ADDR's %d", named, port)
	}
	return port
}

// TestShardMetrics: a Prometheus finds every shard's metrics, by the pod
// annotations (kubernetes_sd) or by the PodMonitor component (the
// operator): the same port, path and pods.
func TestShardMetrics(t *testing.T) {
	var shards job
	decodeStrict(t, "kubernetes/shards/shards-job.yaml", &shards)
	port := metricsPort(t, shards)
	if lg := envOf(shards.Spec.Template.Spec.Containers[0])["METRICS_LINGER"].Value; lg == "" || lg == "0s" {
		t.Errorf("shards: METRICS_LINGER %q: a shard must serve its final figures a while for the last scrape", lg)
	}
	a := shards.Spec.Template.Metadata.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != strconv.Itoa(port) || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("shard pod annotations %v: want prometheus.io/scrape true, port %d, path /metrics", a, port)
	}
	var pm struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   meta   `yaml:"metadata"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			PodMetricsEndpoints []struct {
				Port        string `yaml:"port"`
				Path        string `yaml:"path"`
				Interval    string `yaml:"interval"`
				Relabelings []struct {
					SourceLabels []string `yaml:"sourceLabels"`
					TargetLabel  string   `yaml:"targetLabel"`
				} `yaml:"relabelings"`
			} `yaml:"podMetricsEndpoints"`
		} `yaml:"spec"`
	}
	decodeStrict(t, "kubernetes/podmonitor/podmonitor.yaml", &pm)
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Errorf("podmonitor: %s %s, want a monitoring.coreos.com/v1 PodMonitor", pm.APIVersion, pm.Kind)
	}
	if len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Error("podmonitor selects every pod")
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if shards.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("podmonitor selects %s=%s, the shard pods have %q", k, v, shards.Spec.Template.Metadata.Labels[k])
		}
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("podmonitor: %d endpoints, want 1", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port != "metrics" || ep.Path != a["prometheus.io/path"] {
		t.Errorf("podmonitor endpoint port %q path %q: want the container port metrics and %s", ep.Port, ep.Path, a["prometheus.io/path"])
	}
	// The final figures stay up METRICS_LINGER: at least two scrapes.
	iv, err1 := time.ParseDuration(ep.Interval)
	lg, err2 := time.ParseDuration(envOf(shards.Spec.Template.Spec.Containers[0])["METRICS_LINGER"].Value)
	if err1 != nil || err2 != nil || lg < 2*iv {
		t.Errorf("podmonitor interval %q, METRICS_LINGER %v: the linger must cover two scrapes", ep.Interval, lg)
	}
}

// Workflow view.
type workflow struct {
	Name        string               `yaml:"name"`
	On          map[string]yaml.Node `yaml:"on"`
	Permissions map[string]string    `yaml:"permissions"`
	Env         map[string]string    `yaml:"env"`
	Jobs        map[string]struct {
		RunsOn         string `yaml:"runs-on"`
		TimeoutMinutes int    `yaml:"timeout-minutes"`
		Steps          []struct {
			Name            string            `yaml:"name"`
			ID              string            `yaml:"id"`
			Uses            string            `yaml:"uses"`
			With            map[string]string `yaml:"with"`
			Run             string            `yaml:"run"`
			If              string            `yaml:"if"`
			ContinueOnError bool              `yaml:"continue-on-error"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func TestNightlyWorkflow(t *testing.T) {
	var w workflow
	decodeStrict(t, "../.github/workflows/nightly.yml", &w)
	if _, ok := w.On["schedule"]; !ok {
		t.Error("nightly workflow has no schedule")
	}
	j, ok := w.Jobs["nightly"]
	if !ok || len(j.Steps) == 0 {
		t.Fatal("no nightly job")
	}
	var runs strings.Builder
	ids := map[string]bool{}
	uploads := false
	for _, s := range j.Steps {
		runs.WriteString(s.Run + "\n")
		if s.ID != "" {
			ids[s.ID] = true
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			uploads = s.If == "always()" && s.With["path"] != ""
		}
	}
	if !uploads {
		t.Error("reports are not uploaded as artifacts on every outcome")
	}
	for _, want := range []string{"lobbybench conform", "lobbybench run", "--shard", "report merge", "report compare", "report html", "report junit"} {
		if !strings.Contains(runs.String(), want) {
			t.Errorf("workflow never runs %q", want)
		}
	}
	// Every steps.<id> reference names a step.
	for _, m := range regexp.MustCompile(`steps\.([a-z_-]+)\.outcome`).FindAllStringSubmatch(readFile(t, "../.github/workflows/nightly.yml"), -1) {
		if !ids[m[1]] {
			t.Errorf("steps.%s is not a step id", m[1])
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// lobbybench builds the command once per test binary.
func lobbybench(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lobbybench-deploy-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "lobbybench")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/lobbybench").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

var invocationRE = regexp.MustCompile(`lobbybench (run|conform|serve|report (?:html|junit|compare|merge))\b([^;\n|&]*)`)
var flagRE = regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)

// TestDocumentedFlagsExist checks every flag the manifests, the workflow,
// the repository's README and the manual in docs/ (docs/kubernetes.md among it) pass to
// lobbybench is one its --help lists, so the examples cannot drift from the
// command line.
func TestDocumentedFlagsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := lobbybench(t)
	help := map[string]string{}
	checked := 0
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no manual in ../docs: %v", err)
	}
	files := append([]string{"kubernetes/shards/shards-job.yaml", "kubernetes/merge/merge-job.yaml", "../.github/workflows/nightly.yml", "../README.md"}, docs...)
	for _, f := range files {
		text := strings.ReplaceAll(readFile(t, f), "\\\n", " ")
		for _, m := range invocationRE.FindAllStringSubmatch(text, -1) {
			sub := m[1]
			if _, ok := help[sub]; !ok {
				out, err := exec.Command(bin, append(strings.Fields(sub), "--help")...).CombinedOutput()
				if err != nil {
					t.Fatalf("lobbybench %s --help: %v\n%s", sub, err, out)
				}
				help[sub] = string(out)
			}
			args := regexp.MustCompile(`\$\([^)]*\)`).ReplaceAllString(m[2], "") // shell $(date -u …) is not ours
			for _, fm := range flagRE.FindAllStringSubmatch(args, -1) {
				if fm[1] == "help" {
					continue // every command takes it: it is how this test reads the list
				}
				checked++
				if !regexp.MustCompile(`(?m)^\s+--?` + regexp.QuoteMeta(fm[1]) + `\b`).MatchString(help[sub]) {
					t.Errorf("%s: lobbybench %s has no flag --%s", f, sub, fm[1])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d flags checked: the invocation pattern no longer matches", checked)
	}
}
