#!/usr/bin/env bash
# A throwaway single-node Kubernetes on this machine, for make e2e-k8s:
#
#   cluster.sh up      start etcd, containerd, kube-apiserver,
#                      kube-controller-manager, kube-scheduler and a kubelet,
#                      wait for the node to be Ready
#   cluster.sh down    stop them by the PIDs recorded at start, remove the
#                      containers, unmount what they mounted, delete the CNI
#                      bridge, restore the iptables rules and sysctls saved at
#                      start, remove the state directory
#
# No systemd is needed: every daemon is started here, its PID written to
# $E2E_DIR/pids/<name>. All addresses are 127.0.0.1 (node IP, apiserver
# advertise address); pods of the e2e overlay use hostNetwork, so no load
# traffic touches the pod network. The facts behind every setting are in
# docs/kubernetes.md, "Locally, on a throwaway cluster: make e2e-k8s".
set -euo pipefail

E2E_DIR=${E2E_DIR:-/tmp/lobbybench-e2e}
K8S_VERSION=${K8S_VERSION:-v1.34.4}
K8S_CACHE=${K8S_CACHE:-$HOME/.cache/lobbybench-k8s}
KBIN=$K8S_CACHE/$K8S_VERSION/bin
APISERVER_PORT=${APISERVER_PORT:-16443}
ETCD_PORT=${ETCD_PORT:-12379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-12380}
KUBELET_PORT=${KUBELET_PORT:-10250}
NODE=${NODE:-lobbybench-e2e}
BRIDGE=lbe2e0                   # the CNI bridge; no pod uses it (hostNetwork), the node needs a network to be Ready
POD_CIDR=10.254.77.0/24         # never a traffic target: only the CNI config names it
UP_TIMEOUT=${UP_TIMEOUT:-120}   # seconds for the whole bring-up

# Fixed paths the kubelet, containerd, runc and the CNI plugins use whatever
# their configured directories; each one absent at up is removed at down.
HOST_PATHS="/var/lib/kubelet /run/containerd /run/runc /var/lib/cni /run/netns /etc/cni /opt/cni /var/log/pods /var/log/containers"

# Sysctls the kubelet (and a CNI bridge) may change; saved at up, restored at down.
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward"

T0=$(date +%s.%N)
log() { echo "cluster: $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN{printf "%5.1fs", b-a}') $*" >&2; }
die() { log "$*"; exit 1; }

kubectl_() { "$KBIN/kubectl" --kubeconfig "$E2E_DIR/pki/admin.kubeconfig" "$@"; }

# start NAME CMD...: runs CMD in the background with its output in
# $E2E_DIR/logs/NAME.log and records its PID.
start() {
  local name=$1; shift
  "$@" >"$E2E_DIR/logs/$name.log" 2>&1 &
  echo $! >"$E2E_DIR/pids/$name"
  log "$name started, pid $!"
}

alive() { local f=$E2E_DIR/pids/$1; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: polls CMD every 0.2 s; fails naming WHAT and
# the last log lines of every daemon that died.
wait_for() {
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs )) pf n
  until "$@" >/dev/null 2>&1; do
    for pf in "$E2E_DIR"/pids/*; do
      [ -f "$pf" ] || continue
      n=$(basename "$pf")
      if ! alive "$n"; then
        log "$n exited; last lines of its log:"; tail -20 "$E2E_DIR/logs/$n.log" >&2
        die "gave up waiting for $what"
      fi
    done
    [ "$(date +%s)" -lt "$end" ] || die "gave up waiting for $what after ${secs}s"
    sleep 0.2
  done
}

certs() {
  local d=$E2E_DIR/pki
  mkdir -p "$d"; cd "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=lobbybench-e2e-ca" 2>/dev/null
  cat >apiserver.ext <<EOT
subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth
EOT
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile apiserver.ext 2>/dev/null
  # One admin identity (system:masters) for every component and kubectl:
  # acceptable on a cluster that lives for one test run.
  printf 'extendedKeyUsage=clientAuth\n' >client.ext
  openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=lobbybench-e2e-admin" 2>/dev/null
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 2 -extfile client.ext 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cat >admin.kubeconfig <<EOT
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$d/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$d/admin.crt", client-key: "$d/admin.key"}
contexts:
- name: e2e
  context: {cluster: e2e, user: admin, namespace: default}
current-context: e2e
EOT
  cd - >/dev/null
}

containerd_config() {
  mkdir -p "$E2E_DIR/cni/net.d" "$E2E_DIR/containerd"
  cat >"$E2E_DIR/cni/net.d/10-lbe2e.conflist" <<EOT
{"cniVersion": "0.4.0", "name": "lbe2e", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "dataDir": "$E2E_DIR/cni/ipam"}},
  {"type": "loopback"}]}
EOT
  cat >"$E2E_DIR/containerd/config.toml" <<EOT
version = 2
root = "$E2E_DIR/containerd/root"
state = "$E2E_DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$E2E_DIR/containerd.sock"
[ttrpc]
  address = "$E2E_DIR/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  # The pause container's oom_score_adj needs CAP_SYS_RESOURCE, which root
  # lacks here; without this every sandbox fails in runc ("can't get final
  # child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  sandbox_image = "docker.io/lobbybench/pause:e2e"   # built locally: no registry pulls
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$E2E_DIR/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$E2E_DIR/containerd/opt"
EOT
}

kubelet_config() {
  mkdir -p "$E2E_DIR/kubelet"
  cat >"$E2E_DIR/kubelet/config.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: 0
readOnlyPort: 0
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: /etc/resolv.conf
maxPods: 20
podLogsDir: $E2E_DIR/pod-logs
EOT
}

up() {
  [ -x "$KBIN/kube-apiserver" ] || die "no Kubernetes binaries in $KBIN: run deploy/e2e/build-k8s.sh first"
  if [ -d "$E2E_DIR/pids" ] && ls "$E2E_DIR"/pids/* >/dev/null 2>&1; then
    die "$E2E_DIR holds a cluster's PIDs: run '$0 down' first"
  fi
  rm -rf --one-file-system "$E2E_DIR"
  mkdir -p "$E2E_DIR"/{pids,logs,saved}
  trap 'log "up failed: tearing down"; down' EXIT
  # What down restores: sysctls, iptables rules, the mount table.
  for s in $SYSCTLS; do
    v=$(sysctl -n "$s" 2>/dev/null) && printf '%s=%s\n' "$s" "$v"
  done >"$E2E_DIR/saved/sysctl"
  for t in iptables ip6tables; do
    command -v "$t-save" >/dev/null && "$t-save" >"$E2E_DIR/saved/$t" 2>/dev/null || true
  done
  for h in $HOST_PATHS; do [ -e "$h" ] || echo "$h"; done >"$E2E_DIR/saved/absent"
  certs
  containerd_config
  kubelet_config

  start etcd etcd --name e2e --data-dir "$E2E_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT"
  start containerd containerd --config "$E2E_DIR/containerd/config.toml"
  wait_for "etcd" 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"

  local p=$E2E_DIR/pki
  start kube-apiserver "$KBIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --service-cluster-ip-range 10.0.0.0/24 \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/admin.crt" --kubelet-client-key "$p/admin.key" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --authorization-mode Node,RBAC --enable-priority-and-fairness=false \
    --endpoint-reconciler-type none   # 127.0.0.1 may not be an Endpoints address; nothing here uses the kubernetes Service
  wait_for "kube-apiserver" 60 kubectl_ get --raw /readyz

  start kube-controller-manager "$KBIN/kube-controller-manager" \
    --kubeconfig "$p/admin.kubeconfig" --leader-elect=false --bind-address 127.0.0.1 \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --use-service-account-credentials=false
  start kube-scheduler "$KBIN/kube-scheduler" \
    --kubeconfig "$p/admin.kubeconfig" --leader-elect=false --bind-address 127.0.0.1
  wait_for "containerd" 30 ctr --address "$E2E_DIR/containerd.sock" version

  start kubelet "$KBIN/kubelet" \
    --config "$E2E_DIR/kubelet/config.yaml" --kubeconfig "$p/admin.kubeconfig" \
    --container-runtime-endpoint "unix://$E2E_DIR/containerd.sock" \
    --root-dir "$E2E_DIR/kubelet/root" --cert-dir "$E2E_DIR/kubelet/pki" \
    --node-ip 127.0.0.1 --hostname-override "$NODE"
  wait_for "node $NODE Ready" "$UP_TIMEOUT" kubectl_ wait --for=condition=Ready "node/$NODE" --timeout=2s
  wait_for "the default ServiceAccount" 60 kubectl_ get serviceaccount default
  trap - EXIT
  log "up: node $NODE Ready; kubeconfig $p/admin.kubeconfig"
}

# stop NAME...: SIGTERM to each recorded PID at once, SIGKILL to any still
# alive after 10 s.
stop() {
  local n f pid pids=() names=()
  for n in "$@"; do
    f=$E2E_DIR/pids/$n
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; pids+=("$pid"); names+=("$n"); fi
    rm -f "$f"
  done
  local i
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[$i]}" 2>/dev/null; then log "${names[$i]} (pid ${pids[$i]}) ignored SIGTERM: SIGKILL"; kill -9 "${pids[$i]}" 2>/dev/null || true; fi
    log "${names[$i]} stopped (pid ${pids[$i]})"
  done
}

# restore_rules iptables|ip6tables: puts back the tables saved at up and
# empties the tables created since (kubelet makes KUBE-* chains in
# filter, nat and mangle).
restore_rules() {
  local t=$1 saved=$E2E_DIR/saved/$1
  [ -f "$saved" ] || return 0
  local now; now=$("$t-save" 2>/dev/null) || return 0
  [ "$now" = "$(cat "$saved")" ] && return 0
  for tab in $(printf '%s\n' "$now" | sed -n 's/^\*//p'); do
    grep -qx "\*$tab" "$saved" || { "$t" -t "$tab" -F && "$t" -t "$tab" -X; } || true
  done
  [ -s "$saved" ] && "$t-restore" <"$saved"
  log "$t rules restored"
}

down() {
  [ -d "$E2E_DIR" ] || { log "nothing to tear down ($E2E_DIR absent)"; return 0; }
  local sock=$E2E_DIR/containerd.sock
  # The kubelet first, so it restarts nothing; then every container of ours,
  # through containerd itself, so the shims exit with their tasks.
  stop kubelet
  if alive containerd; then
    for ns in k8s.io; do
      for t in $(ctr --address "$sock" -n $ns tasks ls -q 2>/dev/null); do
        ctr --address "$sock" -n $ns tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
      done
      for _ in $(seq 25); do [ -z "$(ctr --address "$sock" -n $ns tasks ls -q 2>/dev/null | head -1)" ] && break
        for t in $(ctr --address "$sock" -n $ns tasks ls -q 2>/dev/null); do ctr --address "$sock" -n $ns tasks delete -f "$t" >/dev/null 2>&1 || true; done
        sleep 0.2; done
      for c in $(ctr --address "$sock" -n $ns containers ls -q 2>/dev/null); do
        ctr --address "$sock" -n $ns containers delete "$c" >/dev/null 2>&1 || true
      done
    done
  fi
  stop kube-scheduler kube-controller-manager kube-apiserver containerd
  stop etcd
  # Whatever is still mounted under the state directory or a host path we
  # created (pod volumes, container root filesystems, sandbox /dev/shm),
  # deepest first.
  local created="" m x
  [ -f "$E2E_DIR/saved/absent" ] && created=$(cat "$E2E_DIR/saved/absent")
  ours() { for x in "$E2E_DIR" $created; do awk -v d="$x/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo; done | sort -r; }
  for _ in 1 2 3; do
    m=$(ours)
    [ -z "$m" ] && break
    for x in $m; do umount "$x" 2>/dev/null || umount -l "$x" 2>/dev/null || true; done
  done
  m=$(ours)
  [ -z "$m" ] || log "still mounted: $m"
  for x in $created; do
    if [ -e "$x" ]; then rm -rf --one-file-system "$x" && log "removed $x (created by this cluster)"; fi
  done
  # Network: the bridge (only created if a pod ever used the pod network)
  # and the network namespaces of the sandboxes.
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link delete "$BRIDGE" && log "bridge $BRIDGE deleted"; fi
  for t in iptables ip6tables; do restore_rules "$t"; done
  if [ -f "$E2E_DIR/saved/sysctl" ]; then
    while IFS== read -r k v; do
      [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || { sysctl -qw "$k=$v" && log "sysctl $k restored to $v"; }
    done <"$E2E_DIR/saved/sysctl"
  fi
  # Cgroups the kubelet and containerd made (empty once their tasks are gone).
  for c in /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/*/kubepods.slice; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  # Everything but the logs, never crossing into a file system still mounted.
  find "$E2E_DIR" -mindepth 1 -maxdepth 1 ! -name logs ! -name pod-logs -exec rm -rf --one-file-system {} +
  log "down (logs kept in $E2E_DIR/logs)"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
