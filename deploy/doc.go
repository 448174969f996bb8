// Package deploy holds no code: deploy/kubernetes has the manifests for
// sharded runs and .github/workflows/nightly.yml the nightly CI example,
// both documented in deploy/README.md. Its tests check that the manifests
// parse, agree with each other and only use flags lobbybench has, and run
// the shard-and-merge path with several real processes.
package deploy
