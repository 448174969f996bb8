#!/usr/bin/env bash
# make e2e-dashboard: a headless browser watches `lobbybench run --workers 2
# --dashboard-addr` (the live page) and checks what a person would see.
# Loopback only.
#
#   1. prerequisites, installed by the project's own files when missing
#      (unless E2E_NO_INSTALL=1): Debian's chromium (apt-get install -y
#      chromium; /usr/bin/chromium), node and npm, and playwright-core from
#      deploy/e2e/dashboard/package-lock.json (npm ci). No browser is ever
#      downloaded through playwright: it drives /usr/bin/chromium.
#   2. go build of lobbybench
#   3. deploy/e2e/dashboard/test.mjs: an embedded-server run of 30 s with
#      --workers 2 --dashboard-addr 127.0.0.1:PORT --serve-linger, watched
#      by chromium (headless, fresh user-data-dir) through a TCP proxy of
#      the test's own:
#      - two screenshots 4 s apart: the counters advanced, the charts are
#        drawn (SVG) and hold more points;
#      - the proxy cut: the page says "connection lost, retrying… (last
#        update …)" and shows nothing new; restored, it resumes by itself;
#      - while running: "running, N s of M s planned" and a progress bar;
#      - after the run: the final report, its headline the one
#        `report html` gives of the run's JSON result, its counters the
#        JSON's, and "the run is over (final report below)"; then Ctrl-C
#        ends the linger, and the page still says so and keeps the report
#        (not "connection lost"); no request of the page was refused (no
#        favicon 404);
#      - at 1,280 x 800, the live page, the run's HTML report and a
#        capacity report (reports/testdata/capacity.json): nothing wider
#        than the window (wide tables scroll in their own box), every
#        chart legend and label whole.
#   4. teardown (always): the processes it started, by PID
#
# Screenshots go to DASHBOARD_SHOTS (default: bin/e2e-dashboard/shots).
# Exit codes: 0 passed; 1 failed; 2 NOT RUN, a prerequisite is missing
# (this is not a pass). Bounded: E2E_TIMEOUT seconds (default 150) for the
# browser check; apt-get and npm by their own network timeouts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${E2E_OUT:-$root/bin/e2e-dashboard}
E2E_TIMEOUT=${E2E_TIMEOUT:-150}
export DASHBOARD_SHOTS=${DASHBOARD_SHOTS:-$out/shots}
# shellcheck source=deploy/e2e/lib.sh
. "$root/deploy/e2e/lib.sh"
e2e_init e2e-dashboard

# ---- 1. prerequisites
can_install() { [ "${E2E_NO_INSTALL:-0}" != 1 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; }
apt_install() {
  echo "e2e-dashboard: installing $* (Debian packages)" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
command -v go >/dev/null || not_run "go is not on PATH"
if [ ! -x /usr/bin/chromium ]; then
  can_install || not_run "no /usr/bin/chromium (Debian: apt-get install -y chromium, as root)"
  apt_install chromium || not_run "apt-get install chromium failed"
  [ -x /usr/bin/chromium ] || not_run "apt-get installed chromium but /usr/bin/chromium is missing"
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  can_install || not_run "node and npm are not on PATH (Debian: apt-get install -y nodejs npm, as root)"
  apt_install nodejs npm || not_run "apt-get install nodejs npm failed"
fi
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  not_run "node $(node --version) is older than 20, which playwright-core needs"

rm -rf "$out" && mkdir -p "$out/js" "$DASHBOARD_SHOTS"
cp "$root/deploy/e2e/dashboard/package.json" "$root/deploy/e2e/dashboard/package-lock.json" "$root/deploy/e2e/dashboard/test.mjs" "$out/js/"
echo "e2e-dashboard: == npm ci (playwright-core, from package-lock.json; no browser download)" >&2
(cd "$out/js" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2) ||
  not_run "npm ci of deploy/e2e/dashboard failed (the npm registry unreachable?)"

# ---- 2. build
echo "e2e-dashboard: == build" >&2
(cd "$root" && go build -o "$out/lobbybench" ./cmd/lobbybench) || fail "go build"

# ---- 3. the browser check (bounded by E2E_TIMEOUT, plus a margin for the
# browser's own start and stop)
echo "e2e-dashboard: == chromium watches run --workers 2 --dashboard-addr" >&2
rc=0
LOBBYBENCH="$out/lobbybench" E2E_OUT="$out" E2E_TIMEOUT="$E2E_TIMEOUT" CAPACITY_JSON="$root/reports/testdata/capacity.json" \
  timeout --signal=TERM --kill-after=10 $(( E2E_TIMEOUT + 30 )) node "$out/js/test.mjs" &
pids+=($!)
wait "${pids[-1]}" || rc=$?
if [ "$rc" != 0 ]; then
  echo "e2e-dashboard: the run's stderr:" >&2
  tail -n 20 "$out/run.err" >&2 || true
  fail "the browser check failed (exit $rc); screenshots in $DASHBOARD_SHOTS"
fi
echo "e2e-dashboard: PASS (screenshots in $DASHBOARD_SHOTS)" >&2
