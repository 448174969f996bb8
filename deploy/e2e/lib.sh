# Shared by the local end-to-end scripts (prometheus.sh, dashboard.sh):
# source it, then call e2e_init NAME. It defines
#   not_run MSG  exit 2: a prerequisite is missing (NOT RUN, not a pass)
#   fail MSG     exit 1
#   pids         the processes the script started; each is killed and
#                waited for on exit, also on failure and Ctrl-C
# and the traps that make that so.
e2e_init() {
  E2E_NAME=$1
  pids=()
  trap e2e_cleanup EXIT
  trap 'exit 1' INT TERM
}
not_run() {
  echo "$E2E_NAME: NOT RUN: $*" >&2
  echo "$E2E_NAME: NOT RUN (a prerequisite is missing; this is not a pass)" >&2
  exit 2
}
fail() { echo "$E2E_NAME: FAIL: $*" >&2; exit 1; }
e2e_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
