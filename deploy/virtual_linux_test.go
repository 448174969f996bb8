//go:build linux

package deploy

import (
	"slices"
	"testing"

	"github.com/lobbybench/lobbybench/internal/vflow"
)

// TestVirtualComponent: the component that gives the shards virtual flows
// patches the shards Job's one container, sets FLOWS (which the shard
// script passes as --flows) to virtual, and grants exactly what vflow
// needs, to a process that keeps it (uid 0: a process that is not root
// loses added capabilities when it starts its program).
func TestVirtualComponent(t *testing.T) {
	patch, shards := shardsPatch(t, "virtual")
	cs := patch.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != shards.Spec.Template.Spec.Containers[0].Name {
		t.Fatalf("virtual: want one container patch named as the shards', got %+v", cs)
	}
	if f := envOf(cs[0])["FLOWS"].Value; f != "virtual" {
		t.Errorf("virtual: FLOWS %q, want virtual", f)
	}
	sc := cs[0].SecurityContext
	if sc == nil {
		t.Fatal("virtual: no securityContext")
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Errorf("virtual: runAsUser %v, want 0 (the image's user would drop the capabilities)", sc.RunAsUser)
	}
	got, want := slices.Sorted(slices.Values(sc.Capabilities.Add)), slices.Sorted(slices.Values(vflow.ContainerCapabilities()))
	if !slices.Equal(got, want) {
		t.Errorf("virtual: capabilities add %v, want %v (vflow's)", got, want)
	}
}
