# lobbybench developer targets. Everything here needs only Go (and gcc for -race).
GO        ?= go
BIN       ?= bin/lobbybench
FUZZTIME  ?= 20s
BENCHTIME ?= 1s
PKGS      := ./...

.PHONY: all build test race vet fmt bench bench-run fuzz ci clean

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

# Micro-benchmarks of codecs, recorders and servers (count 5 so benchstat has medians).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -benchtime $(BENCHTIME) $(PKGS)

# Harness overhead: a bare Go UDP echo pair against lobbybench's ping flow with the same
# client counts (req/s ratio, p50 difference at one client), then a 10,000-client memory run.
bench-run:
	$(GO) run ./engine/benchrun $(BENCHRUN_FLAGS)

# Every fuzz target, each bounded by FUZZTIME. go test -fuzz takes one target per run.
fuzz:
	bash .ci/fuzz $(FUZZTIME)

ci:
	bash .ci/run

clean:
	rm -rf bin
