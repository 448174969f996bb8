package deploy

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPodServerComponent: the e2e's last phase (local/podserver) takes the
// shards off the node's network into pods of their own, each with the
// reference server as a native sidecar on the pod's loopback at the port
// the shards target, configured as run.sh configures the host's server,
// under the runtime's default seccomp profile.
func TestPodServerComponent(t *testing.T) {
	var k kustomization
	decodeStrict(t, "kubernetes/local/podserver/kustomization.yaml", &k)
	if len(k.Patches) != 1 || k.Patches[0].Path == "" {
		t.Fatalf("local/podserver: want one patch file, got %+v", k.Patches)
	}
	var patch struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   meta   `yaml:"metadata"`
		Spec       struct {
			Template struct {
				Spec struct {
					HostNetwork     *bool `yaml:"hostNetwork"`
					SecurityContext struct {
						SeccompProfile struct {
							Type string `yaml:"type"`
						} `yaml:"seccompProfile"`
					} `yaml:"securityContext"`
					InitContainers []struct {
						container     `yaml:",inline"`
						RestartPolicy string `yaml:"restartPolicy"`
						PullPolicy    string `yaml:"imagePullPolicy"`
					} `yaml:"initContainers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	decodeStrict(t, "kubernetes/local/podserver/"+k.Patches[0].Path, &patch)
	var shards job
	decodeStrict(t, "kubernetes/shards/shards-job.yaml", &shards)
	if patch.Kind != "Job" || patch.Metadata.Name != shards.Metadata.Name {
		t.Errorf("local/podserver patches %s %q, want the shards Job %q", patch.Kind, patch.Metadata.Name, shards.Metadata.Name)
	}
	ps := patch.Spec.Template.Spec
	if ps.HostNetwork == nil || *ps.HostNetwork {
		t.Error("local/podserver: want hostNetwork: false (local/common sets it true): the pod's own network")
	}
	if ps.SecurityContext.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("local/podserver: seccomp profile %q, want RuntimeDefault", ps.SecurityContext.SeccompProfile.Type)
	}
	if len(ps.InitContainers) != 1 {
		t.Fatalf("local/podserver: want one sidecar, got %d init containers", len(ps.InitContainers))
	}
	c := ps.InitContainers[0]
	if c.RestartPolicy != "Always" || c.PullPolicy != "Never" || c.Image != "docker.io/lobbybench/lobbybench:e2e" {
		t.Errorf("local/podserver sidecar %q: restartPolicy %q, imagePullPolicy %q, image %q; want a native sidecar (Always) of the e2e image, never pulled",
			c.Name, c.RestartPolicy, c.PullPolicy, c.Image)
	}
	checkRequests(t, "local/podserver", c.Resources)

	// The sidecar's server is run.sh's host server, on the pod's loopback.
	m := regexp.MustCompile(`"\$work/lobbybench" (serve [^>]*)>`).FindStringSubmatch(strings.ReplaceAll(readFile(t, "e2e/run.sh"), "\\\n", " "))
	if m == nil {
		t.Fatal("deploy/e2e/run.sh starts no lobbybench serve")
	}
	want := strings.Fields(strings.ReplaceAll(m[1], "$PORT", runSetting(t, "PORT")))
	if !slices.Equal(c.Args, want) {
		t.Errorf("local/podserver sidecar args %q, want run.sh's host server %q", c.Args, want)
	}
	var target job
	decodeStrict(t, "kubernetes/local/shards/target.yaml", &target)
	if tg := envOf(target.Spec.Template.Spec.Containers[0])["TARGET"].Value; !slices.Contains(c.Args, tg) {
		t.Errorf("local/podserver sidecar args %q: not listening on the shards' TARGET %s", c.Args, tg)
	}
}
