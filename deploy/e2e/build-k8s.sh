#!/usr/bin/env bash
# Builds the five Kubernetes binaries the e2e cluster needs (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) from the Go module
# proxy, once per version, into $K8S_CACHE/$K8S_VERSION/bin. Reruns with the
# binaries present return at once. Nothing here is committed: the scratch
# module is generated into the cache directory at run time.
#
# Cold cost: about 280 s of 2 cores, 1.9 GB of memory, 3 GB of Go build cache.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.4}
K8S_CACHE=${K8S_CACHE:-$HOME/.cache/lobbybench-k8s}
dir=$K8S_CACHE/$K8S_VERSION
bin=$dir/bin
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

have_all() {
  for c in "${cmds[@]}"; do [ -x "$bin/$c" ] || return 1; done
}
if have_all; then
  echo "kubernetes $K8S_VERSION: cached in $bin"
  exit 0
fi

command -v go >/dev/null || { echo "build-k8s: go is not on PATH (needed to build Kubernetes $K8S_VERSION)" >&2; exit 1; }
staging=v0${K8S_VERSION#v1}   # k8s.io/api etc. are released as v0.<minor>.<patch>
mod=$dir/src
mkdir -p "$mod" "$bin"
cd "$mod"

# kubernetes' own go.mod replaces every k8s.io/* staging module with
# ./staging/...; a module outside that tree must name their releases instead.
gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[ -f "$gomod" ] || { echo "build-k8s: cannot read k8s.io/kubernetes@$K8S_VERSION go.mod from the module proxy" >&2; exit 1; }
{
  echo "module lobbybench.invalid/k8sbuild"
  echo
  grep -E '^go [0-9]' "$gomod"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  grep -E '=> \./staging/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}'
} > go.mod
n=$(grep -c '^replace ' go.mod)
[ "$n" -gt 20 ] || { echo "build-k8s: expected the staging replace lines in kubernetes' go.mod, found $n" >&2; exit 1; }
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  echo "import ("
  for c in "${cmds[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
  echo ")"
} > tools.go
go mod tidy

minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
start=$(date +%s)
for c in "${cmds[@]}"; do
  echo "build-k8s: $c"
  CGO_ENABLED=0 nice -n 10 go build -p 2 -trimpath -ldflags "$ld" -o "$bin/$c.tmp" "k8s.io/kubernetes/cmd/$c"
  mv "$bin/$c.tmp" "$bin/$c"
done
echo "kubernetes $K8S_VERSION: built in $(( $(date +%s) - start )) s into $bin"
