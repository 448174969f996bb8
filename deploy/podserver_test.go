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
	patch, _ := shardsPatch(t, "local/podserver")
	ps := patch.Spec.Template.Spec
	if ps.HostNetwork == nil || *ps.HostNetwork {
		t.Error("local/podserver: want hostNetwork: false (local/common sets it true): the pod's own network")
	}
	if ps.SecurityContext == nil || ps.SecurityContext.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("local/podserver: pod securityContext %+v, want the seccomp profile RuntimeDefault", ps.SecurityContext)
	}
	if len(ps.InitContainers) != 1 {
		t.Fatalf("local/podserver: want one sidecar, got %d init containers", len(ps.InitContainers))
	}
	c := ps.InitContainers[0]
	if c.RestartPolicy != "Always" || c.ImagePullPolicy != "Never" || c.Image != "docker.io/lobbybench/lobbybench:e2e" {
		t.Errorf("local/podserver sidecar %q: restartPolicy %q, imagePullPolicy %q, image %q; want a native sidecar (Always) of the e2e image, never pulled",
			c.Name, c.RestartPolicy, c.ImagePullPolicy, c.Image)
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
