#!/usr/bin/env bash
# make e2e-k8s: a sharded lobbybench run on a real single-node Kubernetes,
# on this machine, offline.
#
#   1. prerequisites: root, Linux with cgroup v1 or v2, the Debian packages
#      (installed with apt-get when missing, unless E2E_NO_INSTALL=1)
#   2. Kubernetes binaries, built once per version from the Go module proxy
#      and cached in $K8S_CACHE (build-k8s.sh)
#   3. the lobbybench and pause images, built without docker (image.sh)
#   4. the cluster (cluster.sh up), the images imported into its containerd
#   5. the reference server (lobbybench serve on 127.0.0.1:17777, a host
#      process), the shards' Indexed Job (deploy/kubernetes/local/shards),
#      then the merge Job (deploy/kubernetes/local/merge)
#      The shards start together: the Job gets START_AT = now +
#      E2E_START_MARGIN seconds (default 20) when it is applied, and the last
#      shard's pod is held back 4 s by an init container (local/shards/
#      delay.yaml), so the pods do start apart
#   6. the check: both Jobs Complete (the merge exited 0), then verify/ on
#      the results: shards' sessions summed, histograms merged exactly,
#      thresholds judged on the merged histograms; one start instant for
#      every shard, the held-back one waiting less for it, and the sessions
#      played per second, summed over the shards, the scenario's schedule
#   7. the late phase: the shards again, the held-back pod held past a
#      START_AT only E2E_LATE_MARGIN (8) seconds ahead; the late shard must
#      join late, count its missed arrivals as late_start and make the
#      merge INCOMPLETE (exit 6), the rest of the schedule unshifted
#      (verify -late)
#   8. the virtual phase: the shards again with the component
#      deploy/kubernetes/virtual (run --flows virtual: the capabilities in
#      the container's securityContext, uid 0); every shard must run
#      virtual flows (verify -flows virtual), the merge exit 0, and the
#      checks of 6 hold
#   9. the pod phase: the virtual shards again, each pod on its own
#      network with the reference server as a sidecar on its loopback and
#      the runtime's default seccomp profile (deploy/kubernetes/local/
#      podserver); the checks of 8 hold
#  10. teardown (always, also on failure or Ctrl-C): cluster.sh down
#
# Exit codes: 0 passed; 1 failed; 2 NOT RUN, a prerequisite is missing (the
# message says which and how to get it). Results are copied to
# $E2E_OUT (default bin/e2e-k8s) before teardown. Every wait is bounded:
# the Kubernetes build by K8S_BUILD_TIMEOUT seconds (default 3600; a build
# cut short resumes from the Go build cache next time), the rest, from the
# images to the verdict, by E2E_TIMEOUT (default 600; a warm run takes
# about a minute).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/deploy/e2e
export E2E_DIR=${E2E_DIR:-/tmp/lobbybench-e2e}
export K8S_VERSION=${K8S_VERSION:-v1.34.4}
export K8S_CACHE=${K8S_CACHE:-$HOME/.cache/lobbybench-k8s}
KBIN=$K8S_CACHE/$K8S_VERSION/bin
E2E_OUT=${E2E_OUT:-$root/bin/e2e-k8s}
E2E_TIMEOUT=${E2E_TIMEOUT:-600}
K8S_BUILD_TIMEOUT=${K8S_BUILD_TIMEOUT:-3600}
SHARDS=4                      # = completions in deploy/kubernetes/shards (checked by deploy's tests)
E2E_START_MARGIN=${E2E_START_MARGIN:-20}  # seconds from applying the Job to START_AT: time for every pod to come up
DELAYED=3 DELAY=4s            # = the shard and DELAY_SECONDS in deploy/kubernetes/local/shards/delay.yaml
# The late phase: START_AT this many seconds after applying the Job, the
# delayed pod held back LATE_DELAY seconds, so it comes up at least
# LATE_DELAY - E2E_LATE_MARGIN seconds late, and (pods up in ~4 s here)
# well before the scenario's 15 s end.
E2E_LATE_MARGIN=${E2E_LATE_MARGIN:-8} LATE_DELAY=10
PORT=17777                    # = TARGET in deploy/kubernetes/local/shards/target.yaml
SERVER_PID=

if [ "$E2E_DIR" != /tmp/lobbybench-e2e ]; then
  # The overlay's hostPath names this directory.
  echo "e2e-k8s: E2E_DIR must be /tmp/lobbybench-e2e (deploy/kubernetes/local/common/jobs.yaml mounts its results/)" >&2; exit 2
fi

not_run() {
  echo "e2e-k8s: NOT RUN: $*" >&2
  echo "e2e-k8s: NOT RUN (a prerequisite is missing; this is not a pass)" >&2
  exit 2
}

t0=$(date +%s.%N)
phase_start=$t0
phase_name=
timings=()
phase() {
  local now; now=$(date +%s.%N)
  if [ -n "$phase_name" ]; then
    local d; d=$(awk -v a="$phase_start" -v b="$now" 'BEGIN{printf "%.1f", b-a}')
    timings+=("$phase_name ${d}s")
    echo "e2e-k8s: phase $phase_name: ${d}s" >&2
  fi
  phase_name=$1; phase_start=$now
  [ -z "$1" ] || echo "e2e-k8s: == $1" >&2
  if [ "$1" != teardown ] && [ -n "$1" ] && [ -n "${t_test:-}" ] && [ "$(awk -v a="$t_test" -v b="$now" 'BEGIN{print int(b-a)}')" -ge "$E2E_TIMEOUT" ]; then
    echo "e2e-k8s: FAIL: over E2E_TIMEOUT=${E2E_TIMEOUT}s" >&2; exit 1
  fi
}

# ---- 1. prerequisites
phase prerequisites
[ "$(uname -s)" = Linux ] || not_run "Linux is required (this is $(uname -s))"
[ "$(id -u)" = 0 ] || not_run "root is required (containerd, runc, mounts, iptables): run 'sudo make e2e-k8s'"
command -v go >/dev/null || not_run "go is not on PATH"
[ -d /sys/fs/cgroup ] || not_run "no /sys/fs/cgroup: cgroups are required by the kubelet and runc"
declare -A pkg=([containerd]=containerd [ctr]=containerd [runc]=runc [etcd]=etcd-server [iptables]=iptables
  [conntrack]=conntrack [openssl]=openssl [curl]=curl [busybox]=busybox-static [/usr/lib/cni/bridge]=containernetworking-plugins)
missing=()
for c in "${!pkg[@]}"; do
  if [ "${c#/}" != "$c" ]; then [ -x "$c" ] || missing+=("${pkg[$c]}"); else command -v "$c" >/dev/null || missing+=("${pkg[$c]}"); fi
done
if [ -x /bin/busybox ] && ldd /bin/busybox >/dev/null 2>&1; then missing+=(busybox-static); fi
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [ "${E2E_NO_INSTALL:-0}" = 1 ] || ! command -v apt-get >/dev/null; then
    not_run "missing packages: ${missing[*]} (Debian 12: apt-get install ${missing[*]})"
  fi
  echo "e2e-k8s: installing ${missing[*]}" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    not_run "apt-get install ${missing[*]} failed"
fi
for p in 12379 12380 16443 10250; do
  [ -z "$(ss -Hltn "sport = :$p")" ] || not_run "TCP port $p is in use (a cluster left running? deploy/e2e/cluster.sh down stops one)"
done
[ -z "$(ss -Hlun "sport = :$PORT")" ] || not_run "UDP port $PORT (the reference server's) is in use"

# ---- 2. Kubernetes binaries (cached by version)
phase kubernetes-binaries
timeout "$K8S_BUILD_TIMEOUT" bash "$here/build-k8s.sh" >&2 ||
  { echo "e2e-k8s: FAIL: building Kubernetes $K8S_VERSION failed or took over K8S_BUILD_TIMEOUT=${K8S_BUILD_TIMEOUT}s" >&2; exit 1; }
t_test=$(date +%s.%N)   # E2E_TIMEOUT counts from here
kubectl_() { "$KBIN/kubectl" --kubeconfig "$E2E_DIR/pki/admin.kubeconfig" "$@"; }

# ---- 3. images
phase images
work=$(mktemp -d)
bash "$here/image.sh" "$work" >&2
go build -C "$root" -o "$work/lobbybench" ./cmd/lobbybench

cleanup() {
  local code=$?
  trap - EXIT INT TERM
  phase teardown
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    echo "e2e-k8s: reference server stopped (pid $SERVER_PID)" >&2
  fi
  if [ -f "$E2E_DIR/pki/admin.kubeconfig" ] && [ "$code" != 0 ]; then
    echo "e2e-k8s: cluster state at failure:" >&2
    kubectl_ get nodes,jobs,pods -o wide >&2 2>&1 || true
    kubectl_ get events --sort-by=.lastTimestamp 2>&1 | tail -20 >&2 || true
  fi
  bash "$here/cluster.sh" down >&2 || { echo "e2e-k8s: teardown failed" >&2; code=1; }
  if [ "$code" != 0 ] && [ -d "$E2E_DIR/logs" ]; then
    rm -rf "$E2E_OUT/cluster-logs"; mkdir -p "$E2E_OUT/cluster-logs"
    cp -r "$E2E_DIR/logs/." "$E2E_OUT/cluster-logs/" 2>/dev/null || true
    cp -r "$E2E_DIR/pod-logs" "$E2E_OUT/cluster-logs/pods" 2>/dev/null || true
  fi
  rm -rf --one-file-system "$E2E_DIR" "$work"
  phase ""
  local total; total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  echo "e2e-k8s: timings: ${timings[*]}; total ${total}s" >&2
  if [ "$code" = 0 ]; then echo "e2e-k8s: PASS ($SHARDS shards on Kubernetes $K8S_VERSION; results in $E2E_OUT)" >&2
  else echo "e2e-k8s: FAIL (exit $code; logs in $E2E_OUT/cluster-logs)" >&2; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 4. cluster
phase cluster-up
bash "$here/cluster.sh" up >&2
for i in lobbybench pause; do
  ctr --address "$E2E_DIR/containerd.sock" -n k8s.io images import "$work/$i.tar" >/dev/null
done
mkdir -p "$E2E_DIR/results" && chmod 1777 "$E2E_DIR/results"

# ---- 5. server, shards, merge
phase server
# The scenario creates ~325 rooms from the 4 source addresses every shard
# uses (127.0.0.1-4): lift the room cap and the per-IP room/seat quotas,
# which guard a public server against one abusive address.
"$work/lobbybench" serve --udp-addr 127.0.0.1:$PORT --no-tcp --no-leviathan --base-port 0 --max-instances 2000 \
  --max-rooms-per-ip 0 --max-holds-per-ip 0 \
  >"$E2E_DIR/logs/serve.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 50); do grep -q "udp lobby on" "$E2E_DIR/logs/serve.log" && break; kill -0 $SERVER_PID || break; sleep 0.1; done
grep -q "udp lobby on" "$E2E_DIR/logs/serve.log" || { cat "$E2E_DIR/logs/serve.log" >&2; echo "e2e-k8s: FAIL: the reference server did not start" >&2; exit 1; }

# wait_job NAME SECONDS: waits for Complete or Failed, whichever first.
wait_job() {
  local end=$(( $(date +%s) + $2 )) s
  while :; do
    s=$(kubectl_ get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}' 2>/dev/null || true)
    case " $s " in *" Complete "*) return 0 ;; *" Failed "*) echo "e2e-k8s: FAIL: job $1 failed" >&2; return 1 ;; esac
    [ "$(date +%s)" -lt "$end" ] || { echo "e2e-k8s: FAIL: job $1 not finished after $2 s" >&2; return 1; }
    sleep 0.5
  done
}

# run_shards NAME MARGIN SPEC [COMPONENT...]: the shards Job of
# deploy/kubernetes/local/shards as an overlay made here, $work/NAME
# (kustomize takes a base by relative path only): its pod spec patched with
# SPEC (a flow-style YAML map; START_AT is set this way), the kustomize
# components COMPONENT (directories) added in order. Applies it, waits for
# the Job (150 s past MARGIN, the seconds to START_AT) and prints each
# shard's exit code.
run_shards() {
  local dir=$work/$1 margin=$2 spec=$3 c
  shift 3
  mkdir -p "$dir"
  {
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n' \
      "$(realpath --relative-to="$dir" "$root/deploy/kubernetes/local/shards")"
    [ $# = 0 ] || echo 'components:'
    for c in "$@"; do printf '  - %s\n' "$(realpath --relative-to="$dir" "$c")"; done
    printf 'patches:\n  - patch: |-\n      apiVersion: batch/v1\n      kind: Job\n      metadata: {name: lobbybench-shards}\n      spec: {template: {spec: %s}}\n' "$spec"
  } >"$dir/kustomization.yaml"
  kubectl_ apply -k "$dir" >&2
  wait_job lobbybench-shards $((150 + margin))
  for i in $(seq 0 $((SHARDS - 1))); do
    echo "e2e-k8s: shard $i exited $(cat "$E2E_DIR/results/shard-$i.exit" 2>/dev/null || echo '?')" >&2
  done
}

# check_confined: every pod of the shards Job ran off the node's network
# with its sidecar, and containerd gave every shard's lobbybench container
# a seccomp filter (the runtime's default profile: its spec names one).
check_confined() {
  local pods p id n=0
  pods=$(kubectl_ get pods -l job-name=lobbybench-shards -o jsonpath='{range .items[*]}{.metadata.name}={.spec.hostNetwork}={range .spec.initContainers[*]}{.name},{end}{"\n"}{end}')
  for p in $pods; do
    case "$p" in *=true=*) echo "e2e-k8s: FAIL: pod ${p%%=*} ran on the node's network" >&2; exit 1 ;; esac
    case "$p" in *=*lobby,*) ;; *) echo "e2e-k8s: FAIL: pod ${p%%=*} has no server sidecar" >&2; exit 1 ;; esac
    for id in $(ctr --address "$E2E_DIR/containerd.sock" -n k8s.io containers ls -q \
      "labels.\"io.kubernetes.pod.name\"==${p%%=*},labels.\"io.kubernetes.container.name\"==lobbybench"); do
      case "$(ctr --address "$E2E_DIR/containerd.sock" -n k8s.io containers info "$id")" in *'"seccomp"'*) n=$((n + 1)) ;; esac
    done
  done
  [ "$n" = "$SHARDS" ] || { echo "e2e-k8s: FAIL: $n of $SHARDS shard containers ran under a seccomp profile" >&2; exit 1; }
  echo "e2e-k8s: $SHARDS shard pods on their own network, each with its server, under the runtime's seccomp profile" >&2
}

# start_at SECONDS: the instant SECONDS from now, as START_AT takes it.
start_at() { date -u -d "+$1 seconds" +%Y-%m-%dT%H:%M:%SZ; }

# merge_on_host WANT OUT WHAT: report merge of the shards' results on the
# host must exit WANT (the run being WHAT); the results go to OUT. (The
# in-cluster merge Job is proven by the first phase.)
merge_on_host() {
  local want=$1 out=$2 code=0
  "$work/lobbybench" report merge "$E2E_DIR"/results/shard-*.json -o "$E2E_DIR/results/merged.json" >&2 || code=$?
  [ "$code" = "$want" ] || { echo "e2e-k8s: FAIL: the merge of $3 exited $code, want $want" >&2; exit 1; }
  mkdir -p "$out"
  rm -f "$out"/*
  cp "$E2E_DIR"/results/* "$out"/
}

phase shards
START_AT=$(start_at "$E2E_START_MARGIN")
echo "e2e-k8s: shards start at $START_AT (in ${E2E_START_MARGIN}s); shard $DELAYED's pod is held back $DELAY" >&2
run_shards start "$E2E_START_MARGIN" "{containers: [{name: lobbybench, env: [{name: START_AT, value: \"$START_AT\"}]}]}"

phase merge
kubectl_ apply -k "$root/deploy/kubernetes/local/merge" >&2
merge_ok=0
wait_job lobbybench-merge 60 || merge_ok=$?
# kubectl logs needs the node's address, which the kubelet does not publish
# when it is 127.0.0.1: read the container log the kubelet wrote instead.
sed 's/^[^ ]* [a-z]* [FP] //' "$E2E_DIR"/pod-logs/default_lobbybench-merge-*/lobbybench/0.log >&2 || true
[ "$merge_ok" = 0 ] || exit 1

# ---- 6. check
phase verify
mkdir -p "$E2E_OUT"
rm -f "$E2E_OUT"/shard-* "$E2E_OUT"/merged*
cp "$E2E_DIR"/results/* "$E2E_OUT"/
go run -C "$root" ./deploy/e2e/verify -n "$SHARDS" -scenario "$root/deploy/kubernetes/local/shards/scenario.yaml" \
  -delayed "$DELAYED" -delay "$DELAY" "$E2E_OUT"

# ---- 7. a shard that comes up after the start instant
# The same shards again, with the last one's pod held back LATE_DELAY, past
# a START_AT only E2E_LATE_MARGIN seconds ahead: it must join late, count
# the arrivals of its slice due before it joined as late_start (never
# shifted), and the merge must be INCOMPLETE and name it, exit 6. The
# merge runs on the host: the in-cluster merge Job was proven above.
phase late
kubectl_ delete job lobbybench-shards lobbybench-merge --wait=true >&2
rm -f "$E2E_DIR"/results/*
START_AT=$(start_at "$E2E_LATE_MARGIN")
echo "e2e-k8s: shards start at $START_AT (in ${E2E_LATE_MARGIN}s); shard $DELAYED's pod is held back ${LATE_DELAY}s, past it" >&2
run_shards late "$E2E_LATE_MARGIN" "{initContainers: [{name: delay, env: [{name: DELAY_SECONDS, value: \"$LATE_DELAY\"}]}], containers: [{name: lobbybench, env: [{name: START_AT, value: \"$START_AT\"}]}]}"
merge_on_host 6 "$E2E_OUT/late" "a run with a late shard (6: INCOMPLETE)"
go run -C "$root" ./deploy/e2e/verify -n "$SHARDS" -scenario "$root/deploy/kubernetes/local/shards/scenario.yaml" \
  -delayed "$DELAYED" -late "$E2E_OUT/late"

# ---- 8. virtual flows
# The shards again, each client a virtual flow (the component
# deploy/kubernetes/virtual grants the capabilities): on the host's network
# the four shards share one namespace's sk_lookup hook, each on a block of
# addresses of its own, and the reference server on 127.0.0.1 answers them.
phase virtual
kubectl_ delete job lobbybench-shards --wait=true >&2
rm -f "$E2E_DIR"/results/*
START_AT=$(start_at "$E2E_START_MARGIN")
echo "e2e-k8s: shards on virtual flows start at $START_AT (in ${E2E_START_MARGIN}s)" >&2
run_shards virtual "$E2E_START_MARGIN" "{containers: [{name: lobbybench, env: [{name: START_AT, value: \"$START_AT\"}]}]}" \
  "$root/deploy/kubernetes/virtual"
merge_on_host 0 "$E2E_OUT/virtual" "the shards on virtual flows"
go run -C "$root" ./deploy/e2e/verify -n "$SHARDS" -scenario "$root/deploy/kubernetes/local/shards/scenario.yaml" \
  -delayed "$DELAYED" -delay "$DELAY" -flows virtual "$E2E_OUT/virtual"

# ---- 9. virtual flows, the server in the shard's pod
# The same again, each shard in a network namespace of its own (the CNI
# bridge), its target the reference server started as a sidecar on the
# pod's loopback, under the runtime's default seccomp profile: the
# capabilities must be enough there too, bpf() included.
phase virtual-pod
kubectl_ delete job lobbybench-shards --wait=true >&2
rm -f "$E2E_DIR"/results/*
# The host's server goes first: a shard that still reached the node's
# loopback would find nothing there and fail.
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
echo "e2e-k8s: reference server on the host stopped (pid $SERVER_PID): only the pods' own answer now" >&2
SERVER_PID=
START_AT=$(start_at "$E2E_START_MARGIN")
echo "e2e-k8s: shards on virtual flows, a server in each pod, start at $START_AT (in ${E2E_START_MARGIN}s)" >&2
run_shards virtual-pod "$E2E_START_MARGIN" "{containers: [{name: lobbybench, env: [{name: START_AT, value: \"$START_AT\"}]}]}" \
  "$root/deploy/kubernetes/virtual" "$root/deploy/kubernetes/local/podserver"
merge_on_host 0 "$E2E_OUT/virtual-pod" "the shards on virtual flows with a server in each pod"
check_confined
go run -C "$root" ./deploy/e2e/verify -n "$SHARDS" -scenario "$root/deploy/kubernetes/local/shards/scenario.yaml" \
  -delayed "$DELAYED" -delay "$DELAY" -flows virtual "$E2E_OUT/virtual-pod"
