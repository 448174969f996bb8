package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lobbybench/lobbybench/scenario"
	"go.yaml.in/yaml/v3"
)

// kustomization is the part of a Kustomization or Component these
// manifests use; KnownFields rejects anything else (a typo'd key would
// otherwise be ignored by this test and fail only in kubectl).
type kustomization struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Resources  []string `yaml:"resources"`
	Components []string `yaml:"components"`
	Images     []struct {
		Name    string `yaml:"name"`
		NewName string `yaml:"newName"`
		NewTag  string `yaml:"newTag"`
	} `yaml:"images"`
	ConfigMapGenerator []struct {
		Name     string   `yaml:"name"`
		Behavior string   `yaml:"behavior"`
		Files    []string `yaml:"files"`
		Options  struct {
			DisableNameSuffixHash bool `yaml:"disableNameSuffixHash"`
		} `yaml:"options"`
	} `yaml:"configMapGenerator"`
	Patches []struct {
		Path   string `yaml:"path"`
		Patch  string `yaml:"patch"`
		Target *struct {
			Kind string `yaml:"kind"`
		} `yaml:"target"`
	} `yaml:"patches"`
}

var kustomizeDirs = []string{"shards", "merge", "podmonitor", "virtual", "local/common", "local/shards", "local/merge", "local/podserver"}

// components are the kustomizeDirs that are kustomize components (added to
// an overlay), not kustomizations of their own.
var components = map[string]bool{"podmonitor": true, "virtual": true, "local/common": true, "local/podserver": true}

// TestKustomizations: every kustomization names files and directories that
// exist inside it (kustomize refuses files outside a kustomization's
// directory; directories are fine), and the local overlays build on the
// shipped ones.
func TestKustomizations(t *testing.T) {
	for _, d := range kustomizeDirs {
		dir := filepath.Join("kubernetes", d)
		var k kustomization
		decodeStrict(t, filepath.Join(dir, "kustomization.yaml"), &k)
		wantKind := "Kustomization"
		if components[d] {
			wantKind = "Component"
		}
		if k.Kind != wantKind {
			t.Errorf("%s: kind %q, want %s", dir, k.Kind, wantKind)
		}
		var files []string
		for _, p := range k.Patches {
			if p.Path != "" {
				files = append(files, p.Path)
			}
		}
		for _, g := range k.ConfigMapGenerator {
			files = append(files, g.Files...)
		}
		for _, r := range k.Resources {
			if strings.HasSuffix(r, ".yaml") {
				files = append(files, r)
			} else if _, err := os.Stat(filepath.Join(dir, r, "kustomization.yaml")); err != nil {
				t.Errorf("%s: resource %s is neither a file nor a kustomization: %v", dir, r, err)
			}
		}
		for _, c := range k.Components {
			if _, err := os.Stat(filepath.Join(dir, c, "kustomization.yaml")); err != nil {
				t.Errorf("%s: component %s: %v", dir, c, err)
			}
		}
		for _, f := range files {
			if strings.Contains(f, "..") || filepath.IsAbs(f) {
				t.Errorf("%s: %s is outside the kustomization (kustomize refuses it)", dir, f)
			} else if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
		}
		if strings.HasPrefix(d, "local/") && !components[d] {
			if len(k.Components) != 1 || k.Components[0] != "../common" {
				t.Errorf("%s: components %v, want ../common", dir, k.Components)
			}
			if len(k.Resources) != 1 || k.Resources[0] != "../../"+strings.TrimPrefix(d, "local/") {
				t.Errorf("%s: resources %v, want the shipped ../../%s", dir, k.Resources, strings.TrimPrefix(d, "local/"))
			}
		}
	}
}

// shardsPatch reads the one patch file of the component in
// kubernetes/dir, which must patch the shipped shards Job, and returns it
// with that Job.
func shardsPatch(t *testing.T, dir string) (patch, shards job) {
	t.Helper()
	var k kustomization
	decodeStrict(t, "kubernetes/"+dir+"/kustomization.yaml", &k)
	if len(k.Patches) != 1 || k.Patches[0].Path == "" {
		t.Fatalf("%s: want one patch file, got %+v", dir, k.Patches)
	}
	decodeStrict(t, "kubernetes/"+dir+"/"+k.Patches[0].Path, &patch)
	decodeStrict(t, "kubernetes/shards/shards-job.yaml", &shards)
	if patch.Kind != "Job" || patch.Metadata.Name != shards.Metadata.Name {
		t.Errorf("%s patches %s %q, want the shards Job %q", dir, patch.Kind, patch.Metadata.Name, shards.Metadata.Name)
	}
	return patch, shards
}

// runSetting reads NAME=VALUE from deploy/e2e/run.sh.
func runSetting(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `=(\S+)`).FindStringSubmatch(readFile(t, "e2e/run.sh"))
	if m == nil {
		t.Fatalf("deploy/e2e/run.sh sets no %s", name)
	}
	return strings.Trim(m[1], `"`)
}

// TestLocalOverlay: the overlay make e2e-k8s applies keeps every datagram
// on loopback (hostNetwork, a 127.0.0.1 target), never pulls, writes where
// run.sh reads, agrees with run.sh on the port and the shard count, and
// runs a valid scenario with thresholds.
func TestLocalOverlay(t *testing.T) {
	var common kustomization
	decodeStrict(t, "kubernetes/local/common/kustomization.yaml", &common)
	if len(common.Patches) != 1 || common.Patches[0].Target == nil || common.Patches[0].Target.Kind != "Job" {
		t.Fatalf("local/common: want one patch targeting every Job, got %+v", common.Patches)
	}
	var shipped job
	decodeStrict(t, "kubernetes/shards/shards-job.yaml", &shipped)
	if len(common.Images) != 1 || common.Images[0].Name+":latest" != shipped.Spec.Template.Spec.Containers[0].Image ||
		common.Images[0].NewName+":"+common.Images[0].NewTag != "docker.io/lobbybench/lobbybench:e2e" {
		t.Errorf("local/common images %+v: want the shipped image renamed to the one image.sh builds", common.Images)
	}
	if !strings.Contains(readFile(t, "e2e/image.sh"), "docker.io/lobbybench/lobbybench:e2e") {
		t.Error("e2e/image.sh does not build docker.io/lobbybench/lobbybench:e2e")
	}

	var patch struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   meta   `yaml:"metadata"`
		Spec       struct {
			Template struct {
				Spec struct {
					HostNetwork bool `yaml:"hostNetwork"`
					Containers  []struct {
						Name            string    `yaml:"name"`
						ImagePullPolicy string    `yaml:"imagePullPolicy"`
						Resources       yaml.Node `yaml:"resources"`
						Env             []envVar  `yaml:"env"`
						Ports           []struct {
							ContainerPort int    `yaml:"containerPort"`
							Patch         string `yaml:"$patch"`
						} `yaml:"ports"`
					} `yaml:"containers"`
					Volumes []struct {
						Name                  string    `yaml:"name"`
						PersistentVolumeClaim yaml.Node `yaml:"persistentVolumeClaim"`
						HostPath              struct {
							Path string `yaml:"path"`
							Type string `yaml:"type"`
						} `yaml:"hostPath"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	decodeStrict(t, "kubernetes/local/common/"+common.Patches[0].Path, &patch)
	ps := patch.Spec.Template.Spec
	if !ps.HostNetwork {
		t.Error("local Jobs must use hostNetwork: load traffic stays on 127.0.0.1, never on the pod network")
	}
	if len(ps.Containers) != 1 || ps.Containers[0].Name != "lobbybench" || ps.Containers[0].ImagePullPolicy != "Never" {
		t.Errorf("local container patch %+v: want lobbybench with imagePullPolicy Never", ps.Containers)
	} else {
		checkRequests(t, "local", ps.Containers[0].Resources)
		// hostNetwork: 4 shards on one node cannot all claim the metrics
		// port (a containerPort becomes a hostPort); each takes a
		// loopback port of its own and, unscraped, does not linger.
		c := ps.Containers[0]
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if env["METRICS_ADDR"] != "127.0.0.1:0" || env["METRICS_LINGER"] != "0s" {
			t.Errorf("local env %v: want METRICS_ADDR 127.0.0.1:0 and METRICS_LINGER 0s", env)
		}
		if len(c.Ports) != 1 || c.Ports[0].ContainerPort != metricsPort(t, shipped) || c.Ports[0].Patch != "delete" {
			t.Errorf("local ports %+v: want the shipped metrics port deleted ($patch: delete)", c.Ports)
		}
	}
	dir := strings.TrimSuffix(strings.TrimPrefix(runSetting(t, "export E2E_DIR"), "${E2E_DIR:-"), "}")
	if want := dir + "/results"; len(ps.Volumes) != 1 || ps.Volumes[0].Name != "results" ||
		ps.Volumes[0].PersistentVolumeClaim.Tag != "!!null" || ps.Volumes[0].HostPath.Path != want {
		t.Errorf("local volumes %+v: want results as hostPath %s (run.sh's E2E_DIR/results), the claim deleted (persistentVolumeClaim: null)", ps.Volumes, want)
	}

	var target job
	decodeStrict(t, "kubernetes/local/shards/target.yaml", &target)
	env := envOf(target.Spec.Template.Spec.Containers[0])
	if want := "127.0.0.1:" + runSetting(t, "PORT"); env["TARGET"].Value != want {
		t.Errorf("local TARGET %q, want %s (run.sh's reference server): load only to loopback", env["TARGET"].Value, want)
	}
	if n, _ := strconv.Atoi(runSetting(t, "SHARDS")); n != *shipped.Spec.Completions {
		t.Errorf("run.sh SHARDS=%d, the shards Job completions %d", n, *shipped.Spec.Completions)
	}

	plan, err := scenario.Parse("local/shards/scenario.yaml", []byte(readFile(t, "kubernetes/local/shards/scenario.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Thresholds) == 0 {
		t.Error("the CI scenario has no thresholds: the merge would judge nothing")
	}
	if d := plan.Load.Duration.Seconds(); d > 60 {
		t.Errorf("the CI scenario runs %v s; keep it under a minute", d)
	}
}

// checkRequests: requests are set, and modest enough that 4 shards fit a
// 2-core node (the old 2 CPUs each could not be scheduled there).
func checkRequests(t *testing.T, name string, n yaml.Node) {
	t.Helper()
	var r struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	if err := n.Decode(&r); err != nil {
		t.Fatalf("%s: resources: %v", name, err)
	}
	cpu, mem := r.Requests["cpu"], r.Requests["memory"]
	if cpu == "" || mem == "" {
		t.Fatalf("%s: requests %v: want cpu and memory", name, r.Requests)
	}
	milli := 0
	if v, ok := strings.CutSuffix(cpu, "m"); ok {
		milli, _ = strconv.Atoi(v)
	} else {
		c, _ := strconv.ParseFloat(cpu, 64)
		milli = int(c * 1000)
	}
	if milli <= 0 || milli > 500 {
		t.Errorf("%s: cpu request %q: want a modest default in (0, 500m]", name, cpu)
	}
}
