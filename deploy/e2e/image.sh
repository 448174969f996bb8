#!/usr/bin/env bash
# Builds the two images the e2e cluster runs, without docker or a registry:
#
#   docker.io/lobbybench/lobbybench:e2e   lobbybench (static), busybox for the
#                                         Job scripts' sh, the example scenarios
#   docker.io/lobbybench/pause:e2e        the pod sandbox (deploy/e2e/pause)
#
# Each is a docker-archive tarball written by hand (manifest.json, a config
# with os/arch, entrypoint and user, one layer), which `ctr images import`
# loads. Usage: image.sh OUTDIR; writes OUTDIR/lobbybench.tar, OUTDIR/pause.tar.
set -euo pipefail
out=${1:?usage: image.sh OUTDIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
arch=$(go env GOARCH)
busybox=${BUSYBOX:-/bin/busybox}
! ldd "$busybox" >/dev/null 2>&1 ||
  { echo "image: $busybox is not a static busybox (apt-get install busybox-static)" >&2; exit 1; }

# archive NAME TAG ROOTFS ENTRYPOINT-JSON USER: writes $out/NAME.tar.
archive() {
  local name=$1 tag=$2 rootfs=$3 entry=$4 user=$5
  local w; w=$(mktemp -d)
  # Reproducible layer: fixed owner and mtime, sorted names.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$w/layer.tar" .
  local diff; diff=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
  cat >"$w/config.json" <<EOT
{"architecture":"$arch","os":"linux","config":{"User":"$user","Entrypoint":$entry,"Env":["PATH=/usr/local/bin:/bin"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:$diff"]}}
EOT
  local cfg; cfg=$(sha256sum "$w/config.json" | cut -d' ' -f1)
  mv "$w/config.json" "$w/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]\n' "$cfg" "$tag" >"$w/manifest.json"
  tar --owner=0 --group=0 --numeric-owner -C "$w" -cf "$out/$name.tar" manifest.json "$cfg.json" layer.tar
  rm -rf "$w"
  echo "image: $tag -> $out/$name.tar" >&2
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# lobbybench, as deploy/Dockerfile builds it.
mkdir -p "$stage/lb/usr/local/bin" "$stage/lb/bin" "$stage/lb/tmp" "$stage/lb/scenarios"
CGO_ENABLED=0 go build -C "$root" -trimpath -ldflags "-s -w -X main.version=e2e" -o "$stage/lb/usr/local/bin/lobbybench" ./cmd/lobbybench
cp "$busybox" "$stage/lb/bin/busybox"
for a in sh ls wc cat echo test "[" sleep mkdir rm; do ln -s busybox "$stage/lb/bin/$a"; done
cp "$root"/scenarios/*.yaml "$stage/lb/scenarios/"
chmod 1777 "$stage/lb/tmp"
archive lobbybench docker.io/lobbybench/lobbybench:e2e "$stage/lb" '["/usr/local/bin/lobbybench"]' 10001

mkdir -p "$stage/pause"
CGO_ENABLED=0 go build -C "$root" -trimpath -ldflags "-s -w" -o "$stage/pause/pause" ./deploy/e2e/pause
archive pause docker.io/lobbybench/pause:e2e "$stage/pause" '["/pause"]' 65535
