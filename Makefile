# lobbybench developer targets. Everything here needs only Go (and gcc for -race).
GO        ?= go
BIN       ?= bin/lobbybench
FUZZTIME  ?= 20s
BENCHTIME ?= 1s
PKGS      := ./...

.PHONY: all build test race vet lint fmt bench bench-run bench-truth bench-micro bench-all fuzz fuzz-campaign soak ci clean e2e-k8s e2e-prometheus e2e-dashboard dist

all: vet test build

build:
	$(GO) build -o $(BIN) ./cmd/lobbybench

test:
	$(GO) test $(PKGS)

race:
	$(GO) test -race $(PKGS)

vet:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The static checks of .ci/run: go.mod tidy, staticcheck and actionlint at the
# versions pinned in .ci/tool (built on first use into .ci/bin).
lint:
	$(GO) mod tidy -diff
	bash .ci/tool staticcheck $(PKGS)
	bash .ci/tool actionlint -shellcheck= -pyflakes=
	bash .ci/tool gocyclo -over 25 -ignore '_test\.go$$' .

# The figures that matter, in one go: harness overhead against a real target
# (bench-run), then the hot-path micro-benchmarks (codecs, recorder, server
# handlers, the closed model's iteration) with allocs, count 5 so benchstat has medians.
bench: bench-run bench-truth bench-micro

BENCH_HOT := ./protocols/udplobby/udpwire ./protocols/tcplobby/tcpwire ./protocols/leviathan/levwire ./metrics ./protocols/udplobby/udpserver ./protocols/udplobby/udpclient ./protocols/leviathan/levconn ./engine

bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -benchtime $(BENCHTIME) $(BENCH_HOT)

# Every benchmark of every package (slow: servers, HTML, Prometheus scrapes…).
bench-all:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -benchtime $(BENCHTIME) $(PKGS)

# Harness overhead against a real target: lobbybench serve in another process, list_rooms in a
# closed loop from lobbybench (1-step and 50-step flows), a bare Go client and a Python asyncio
# client, one after another (req/s and CPU us/request), then a 10,000-client memory run.
bench-run: build
	$(GO) run ./tools/benchrun -lobbybench $(BIN) $(BENCHRUN_FLAGS)

# Latency truth: lobbybench against a plain blocking reference client, side by side, on a
# stub server (stub and reference in a child process) with an injected delay (0, 20 ms) and a periodic stall (1 s every 3 s), at
# 200, 2,000 and 20,000 sessions/s; corrected/uncorrected p50/p99, send lag, the reference's.
bench-truth:
	$(GO) run ./tools/benchtruth $(BENCHTRUTH_FLAGS)

# Every fuzz target, each bounded by FUZZTIME. go test -fuzz takes one target per run.
fuzz:
	bash .ci/fuzz $(FUZZTIME)

# Long fuzz campaign: every target FUZZCAMPAIGN_TIME each, one at a time, one
# worker, nice 19 (logs, summary.tsv and the new-coverage corpus in $(FUZZOUT)).
FUZZCAMPAIGN_TIME ?= 10m
FUZZOUT ?= /tmp/lobbybench-fuzz
fuzz-campaign:
	mkdir -p $(FUZZOUT)
	for pkg in $$($(GO) list -f '{{.Dir}}' ./...); do rel=$${pkg#$$(pwd)/}; \
	  for t in $$($(GO) test -list '^Fuzz' ./$$rel | grep '^Fuzz'); do echo "$$rel $$t"; done; done > $(FUZZOUT)/queue
	bash .ci/fuzz-campaign $(FUZZOUT)/queue $(FUZZOUT) $(FUZZCAMPAIGN_TIME)

# Leak soak (about 10 minutes, loopback only): serve and run as separate
# processes, a join-storm plus a CREATE flood and malformed traffic; serve's
# RSS and goroutines and run's RSS sampled every 10 s must stay flat after
# warm-up and rooms return to zero. SOAK_FLAGS="--duration 60s --sample 5s"
# for a short check.
SOAK_FLAGS ?=
soak: build
	$(GO) run ./tools/soak --bin $(BIN) $(SOAK_FLAGS)

ci:
	bash .ci/run

# A sharded run on a real single-node Kubernetes on this machine, offline:
# needs root and Debian packages (installed when missing). The first run
# builds Kubernetes from the Go module proxy (~5 min of 2 cores, cached in
# ~/.cache/lobbybench-k8s); later runs take about a minute. Exit 2: not run
# (a prerequisite is missing), never a pass. See docs/kubernetes.md.
e2e-k8s:
	bash deploy/e2e/run.sh

# A real Prometheus (Debian's package, installed when missing) scrapes a
# `run --workers 2 --metrics-addr` on loopback every 1s; every panel query of
# deploy/grafana/lobbybench.json is checked against the merged JSON result
# (~30 s). Exit 2: not run (a prerequisite is missing). See docs/testing.md.
e2e-prometheus:
	bash deploy/e2e/prometheus.sh

# A headless Debian chromium (installed when missing; playwright-core from
# deploy/e2e/dashboard/package-lock.json drives it, no browser downloaded)
# watches `run --workers 2 --dashboard-addr` on loopback: counters advancing,
# charts growing, a cut connection shown and recovered from, the final
# report's headline the JSON result's (~30 s). Screenshots in
# DASHBOARD_SHOTS. Exit 2: not run (a prerequisite is missing).
e2e-dashboard:
	bash deploy/e2e/dashboard.sh

# Release binaries for every platform in DIST_PLATFORMS, static (CGO_ENABLED=0),
# without local paths (-trimpath), stamped with VERSION (lobbybench version
# prints it), into $(DIST)/ with a SHA256SUMS file; `make dist VERSION=v1.2.3`.
DIST           ?= dist
VERSION        ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
dist:
	rm -rf $(DIST) && mkdir -p $(DIST)
	set -e; for p in $(DIST_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; ext=; if [ "$$os" = windows ]; then ext=.exe; fi; \
	  out=$(DIST)/lobbybench-$(VERSION)-$$os-$$arch$$ext; echo "$$out"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o "$$out" ./cmd/lobbybench; \
	done
	cd $(DIST) && if command -v sha256sum >/dev/null; then sha256sum lobbybench-*; else shasum -a 256 lobbybench-*; fi > SHA256SUMS
	cat $(DIST)/SHA256SUMS

clean:
	rm -rf bin $(DIST)
