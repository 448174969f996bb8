#!/usr/bin/env bash
# make e2e-prometheus: a real Prometheus scrapes a multi-process lobbybench
# run, and the Grafana dashboard's queries (deploy/grafana/lobbybench.json,
# read from the file, so they cannot drift) are checked against the merged
# JSON result. Loopback only.
#
#   1. prerequisites: Debian's prometheus package (installed with apt-get
#      when missing, unless E2E_NO_INSTALL=1), python3, go
#   2. lobbybench serve on 127.0.0.1 (a free port), Prometheus on
#      127.0.0.1 with a generated config scraping the run's metrics every 1s
#   3. lobbybench run --workers 2 --metrics-addr 127.0.0.1:PORT
#      --serve-linger 5s: an open-model list_rooms load of 20 s
#   4. every dashboard panel's query over the HTTP API against the JSON:
#      - the final counters (requests, failures, active sessions, worker
#        states), at a time after the run ended and before its metrics
#        server stopped: EXACT. The workers send their final figures on
#        their last progress line, and --serve-linger serves them for
#        5 scrapes, so the last scrapes hold the result's own figures;
#        without the linger the last scrape could miss up to a scrape
#        interval (1 s) plus a worker's state interval (1 s) of the end.
#      - the request rate ($__rate_interval taken as 10s), at 15 s into
#        the run: within 25% of the run's mean (completed / 20 s). A scraped
#        counter lags the load by up to 2 s (a worker sends its state once
#        a second; the exporter caches a scrape for 1 s) and rate()
#        extrapolates 9 s of samples to 10 s, so each end of the window
#        may be off by a second's worth of ~9: about 20%, plus the
#        arrivals' own variation.
#      - the p99 since the start from the merged buckets: in the same
#        bucket as the result's exact HDR p99 (histogram_quantile
#        interpolates inside a bucket; the exact figure is the result's).
#   5. teardown (always): the processes this script started, by PID
#
# Exit codes: 0 passed; 1 failed; 2 NOT RUN, a prerequisite is missing
# (this is not a pass). Bounded: E2E_TIMEOUT seconds (default 180) for the
# whole check; apt-get by its own network timeouts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${E2E_OUT:-$root/bin/e2e-prometheus}
E2E_TIMEOUT=${E2E_TIMEOUT:-180}
DASHBOARD=$root/deploy/grafana/lobbybench.json
DURATION=20       # seconds of load
LINGER=5s         # the final metrics stay up this long: 5 scrapes
RATE_WINDOW=10s   # what the check takes for Grafana's $__rate_interval
RATE_AT=15        # seconds into the run where the rate is checked
RATE_TOL=0.25     # see the header
# shellcheck source=deploy/e2e/lib.sh
. "$root/deploy/e2e/lib.sh"
e2e_init e2e-prometheus

# ---- 1. prerequisites
command -v go >/dev/null || not_run "go is not on PATH"
command -v python3 >/dev/null || not_run "python3 is not on PATH (Debian: apt-get install python3)"
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -z "$PROMETHEUS" ]; then
  if [ "${E2E_NO_INSTALL:-0}" = 1 ] || ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
    not_run "no prometheus binary (Debian 12: apt-get install prometheus, as root; or PROMETHEUS=/path/to/prometheus)"
  fi
  echo "e2e-prometheus: installing prometheus (Debian package)" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null ||
    not_run "apt-get install prometheus failed"
  PROMETHEUS=$(command -v prometheus) || not_run "apt-get installed prometheus but it is not on PATH"
fi
"$PROMETHEUS" --version 2>&1 | head -1 >&2

rm -rf "$out" && mkdir -p "$out"
deadline=$(( $(date +%s) + E2E_TIMEOUT ))
left() { echo $(( deadline - $(date +%s) )); }

echo "e2e-prometheus: == build" >&2
(cd "$root" && go build -o "$out/lobbybench" ./cmd/lobbybench) || fail "go build"

# Three free ports, held open together while they are picked so that no
# two are the same (a port closed at once may well be handed out again).
read -r LOBBY METRICS PROMPORT < <(python3 -c '
import socket
kinds = [socket.SOCK_DGRAM, socket.SOCK_STREAM, socket.SOCK_STREAM]
socks = [socket.socket(socket.AF_INET, k) for k in kinds]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')

# ---- 2. the server and Prometheus
echo "e2e-prometheus: == server on 127.0.0.1:$LOBBY, Prometheus on 127.0.0.1:$PROMPORT" >&2
"$out/lobbybench" serve --udp-addr "127.0.0.1:$LOBBY" --no-tcp --no-leviathan --base-port 0 --rate-limit 0 \
  >"$out/serve.log" 2>&1 &
pids+=($!)
cat >"$out/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: lobbybench
    static_configs:
      - targets: ['127.0.0.1:$METRICS']
EOF
"$PROMETHEUS" --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" \
  --web.listen-address="127.0.0.1:$PROMPORT" --log.level=warn >"$out/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  grep -q "udp lobby on" "$out/serve.log" && python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PROMPORT/-/ready', timeout=1)" 2>/dev/null && break
  sleep 0.2
done
grep -q "udp lobby on" "$out/serve.log" || { cat "$out/serve.log" >&2; fail "the reference server did not start"; }
python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PROMPORT/-/ready', timeout=1)" ||
  { cat "$out/prometheus.log" >&2; fail "Prometheus is not ready"; }

# ---- 3. the run
cat >"$out/scenario.yaml" <<EOF
name: e2e-prometheus
protocol: udp-lobby
seed: 7
load:
  start_rate: 150/s
  stages:
    - {rate: 150/s, for: ${DURATION}s}
  max_clients: 400
flows:
  - name: poll
    steps: [list_rooms, list_rooms]
thresholds:
  - list_rooms.count > 0
EOF
echo "e2e-prometheus: == run --workers 2 for ${DURATION}s, metrics on 127.0.0.1:$METRICS" >&2
t_start=$(date +%s.%N)
"$out/lobbybench" run --quiet --workers 2 --target "127.0.0.1:$LOBBY" --metrics-addr "127.0.0.1:$METRICS" \
  --serve-linger "$LINGER" --json "$out/run.json" "$out/scenario.yaml" >"$out/run.out" 2>"$out/run.err" &
run_pid=$!
pids+=($run_pid)
t_final=
while kill -0 $run_pid 2>/dev/null; do
  [ "$(left)" -gt 0 ] || fail "over E2E_TIMEOUT=${E2E_TIMEOUT}s"
  if [ -z "$t_final" ] && grep -q "serving the final metrics" "$out/run.err"; then
    sleep 3   # 3 scrapes of the final figures
    t_final=$(date +%s.%N)
  fi
  sleep 0.2
done
code=0; wait $run_pid || code=$?
[ "$code" = 0 ] || { cat "$out/run.err" >&2; fail "run exited $code"; }
[ -n "$t_final" ] || { cat "$out/run.err" >&2; fail "the run never said it was serving its final metrics"; }
[ -s "$out/run.json" ] || fail "no merged JSON result"

# ---- 4. the dashboard's queries against the merged result
echo "e2e-prometheus: == the dashboard's queries (PromQL) against the merged JSON" >&2
rc=0
python3 - "$DASHBOARD" "$out/run.json" "127.0.0.1:$PROMPORT" "$t_start" "$t_final" "$DURATION" "$RATE_WINDOW" "$RATE_AT" "$RATE_TOL" <<'PY' || rc=$?
import json, sys, urllib.parse, urllib.request
dash, res, prom, t_start, t_final, dur, window, rate_at, tol = sys.argv[1:]
t_start, t_final, dur, rate_at, tol = float(t_start), float(t_final), float(dur), float(rate_at), float(tol)
run = json.load(open(res))
tot = run["totals"]
completed = tot["successes"] + tot["failures"]

def query(expr, at):
    url = "http://%s/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": expr, "time": "%.3f" % at}))
    body = json.load(urllib.request.urlopen(url, timeout=10))
    if body.get("status") != "success":
        raise SystemExit("query %s: %s" % (expr, body))
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in body["data"]["result"]}

def one(expr, at):
    r = query(expr, at)
    if len(r) != 1:
        raise AssertionError("%s: %d series at %.0f, want 1: %s" % (expr, len(r), at, r))
    return next(iter(r.values()))

BUCKETS = [50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10, 30, 60]
def bucket(v):
    lo = 0.0
    for b in BUCKETS:
        if v <= b * (1 + 1e-9):
            return (lo, b)
        lo = b
    return (lo, float("inf"))

failed = 0
def check(title, expr, got, want, ok, how):
    global failed
    print("e2e-prometheus: %-42s PromQL %-14s JSON %-14s %s  %s\n    %s" % (title, "%g" % got, want, "PASS" if ok else "FAIL", how, expr))
    failed += not ok

# Each panel title maps to how its query is checked; a panel without a
# check fails the run (the dashboard shows only what this test checked).
def exact_total(title, expr):
    v = one(expr, t_final)
    check(title, expr, v, completed, v == completed, "exact (successes + failures)")
def exact_failures(title, expr):
    v = one(expr, t_final)
    check(title, expr, v, tot["failures"], v == tot["failures"], "exact")
def no_active(title, expr):
    v = one(expr, t_final)
    check(title, expr, v, 0, v == 0, "exact: none left at the end")
def rate(title, expr):
    expr = expr.replace("$__rate_interval", window)
    v = one(expr, t_start + rate_at)
    mean = completed / dur
    check(title, expr, v, "%.1f" % mean, abs(v - mean) <= tol * mean, "within %d%% of completed/%gs, at %gs" % (tol * 100, dur, rate_at))
def p99(title, expr):
    v = one(expr, t_final)
    steps = [s for s in run["steps"] if s["latency"]["count"] > 0]
    if len(steps) != 1:
        raise AssertionError("want one step with latencies, got %d" % len(steps))
    exact = steps[0]["latency"]["p99_us"] / 1e6
    check(title, expr, v, "%g" % exact, bucket(v) == bucket(exact), "the same bucket %s" % (bucket(exact),))
def workers(title, expr):
    r = {dict(k)["state"]: v for k, v in query(expr, t_final).items()}
    want = {"running": 0, "exited": 2, "died": 0}
    check(title, expr, r.get("exited", -1), "2 exited", r == want, "exact: %s" % r)

CHECKS = {
    "Requests completed (all shards)": exact_total,
    "Failures (all shards)": exact_failures,
    "Sessions active (all shards)": no_active,
    "Request rate (all shards)": rate,
    "p99 latency since the start (all shards)": p99,
    "Workers by state": workers,
}
panels = json.load(open(dash))["panels"]
for p in panels:
    exprs = [t["expr"] for t in p.get("targets", [])]
    if p["title"] not in CHECKS or len(exprs) != 1:
        print("e2e-prometheus: panel %r has no check here (or not one query): FAIL" % p["title"])
        failed += 1
        continue
    try:
        CHECKS[p["title"]](p["title"], exprs[0])
    except (AssertionError, OSError) as e:
        print("e2e-prometheus: %s: FAIL: %s" % (p["title"], e))
        failed += 1
print("e2e-prometheus: merged JSON: %d requests completed (%d cut), %d failures, %d sessions, over %d shards" %
      (completed, tot.get("cut", 0), tot["failures"], tot["sessions_started"], run.get("shards", 0)))
sys.exit(1 if failed else 0)
PY
[ $rc = 0 ] || fail "$rc check(s) failed (logs in $out)"
echo "e2e-prometheus: PASS" >&2
