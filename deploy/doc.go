// Package deploy holds no library code: deploy/kubernetes has the kustomize
// directories for sharded runs (and the overlay for a local test cluster),
// deploy/e2e the scripts and helpers of make e2e-k8s, and
// .github/workflows/nightly.yml the nightly CI example, all documented in
// docs/kubernetes.md. Its tests check that the manifests parse, agree with
// each other and with the e2e scripts, keep the local overlay on loopback,
// only use flags lobbybench has, and run the shard-and-merge path with
// several real processes.
package deploy
