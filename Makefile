# Arbiter — the two commands a newcomer needs are `make run` and `make test` (see README.md).
GO       ?= go
BIN      := bin/arbiter
PKGS     := ./...
# Tests share two cores with PostgreSQL, a control plane and Chromium: keep parallelism modest.
# -count=1: never answer from Go's test cache, so a green run means every test ran on this clone.
TESTFLAGS ?= -p 2 -timeout 60m -count=1

.PHONY: all build run test test-unit generate lint k8s operators bench bench-docs clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/arbiter

## run: start the whole product on embedded defaults (private Postgres, local control plane, demo data)
run: build k8s
	./$(BIN) serve --demo

## k8s: build the local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
## kwok) into the cache if missing; minutes the first time, instant afterwards
k8s: build
	./$(BIN) devcluster build

## operators: build the workload operators the local cluster can run (JobSet, LeaderWorkerSet,
## training-operator, Trainer, KubeRay; hack/operators) into the cache if missing; about 15
## minutes the first time on 2 cores, instant afterwards; before the tests, which run them
operators: build
	./$(BIN) devcluster build --operators all

## test: lint, then every test: unit, real PostgreSQL, local control plane, Chromium
test: lint k8s operators
	$(GO) test $(TESTFLAGS) $(PKGS)

## generate: regenerate templ components
generate:
	$(GO) tool templ generate

## lint: gofmt, go vet, and templ generate must leave no diff
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool templ generate >/dev/null
	@if [ -n "$$(git status --porcelain -- '*_templ.go')" ]; then echo "templ generate changed generated files; run make generate and commit:"; git status --porcelain -- '*_templ.go'; exit 1; fi

## bench: the benchmarks of testing.md (figures, not pass/fail): the scheduler core, the API, and
## on local control planes Arbiter vs kube-scheduler (a fill, a backlog of 10,000 pods, first
## bind), failover, and against Kueue (docs/performance.md: its own harness, its scenario end to
## end, reclaim and preemption), which it builds first (about 50 min on 2 cores: 48 min in the last run; and Kueue's first build).
## Each step's output is kept in artifacts/bench/ and ends in a report there: report.html (a
## chart per comparison), report.md (docs/performance.md, "The report")
BENCH_OUT := artifacts/bench
BENCH_OUTPUTS := $(BENCH_OUT)/scheduler.txt $(BENCH_OUT)/cluster.txt
# bench_step runs step $(1) and adds its whole seconds to steps.tsv; with a file name $(2), its
# standard output goes to the terminal and into that file. pipefail: a failing benchmark fails
# make even though tee, last in the pipe, succeeds.
define bench_step
set -o pipefail && start=$$(date +%s) && $(3) $(if $(2),| tee $(BENCH_OUT)/$(2)) && printf '%s\t%s\n' '$(1)' $$(( $$(date +%s) - start )) >> $(BENCH_OUT)/steps.tsv
endef
bench: SHELL := /bin/bash
bench: build k8s
	@rm -rf $(BENCH_OUT) && mkdir -p $(BENCH_OUT) && cat /proc/loadavg > $(BENCH_OUT)/loadavg-start && date +%s > $(BENCH_OUT)/started-at
	$(call bench_step,Kueue build,,./$(BIN) devcluster build --operators kueue)
	$(call bench_step,scheduler core benchmarks,scheduler.txt,$(GO) test -run '^$$' -bench . -benchmem ./scheduler/...)
	$(call bench_step,cluster benchmarks,cluster.txt,$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 90m -v ./bench/)
	@cat /proc/loadavg > $(BENCH_OUT)/loadavg-end && printf 'total\t%s\n' $$(( $$(date +%s) - $$(cat $(BENCH_OUT)/started-at) )) >> $(BENCH_OUT)/steps.tsv
	$(GO) run ./hack/benchreport -dir $(BENCH_OUT) $(BENCH_OUTPUTS)

## bench-docs: write the last make bench's tables (artifacts/bench) into docs/performance.md,
## "Latest run"; make bench itself leaves the docs alone
bench-docs:
	$(GO) run ./hack/benchreport -dir $(BENCH_OUT) -docs docs/performance.md $(BENCH_OUTPUTS)

clean:
	rm -rf bin artifacts
