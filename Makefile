# Arbiter — the two commands a newcomer needs are `make run` and `make test` (see README.md).
GO       ?= go
BIN      := bin/arbiter
PKGS     := ./...
# Tests share two cores with PostgreSQL, a control plane and Chromium: keep parallelism modest.
# -count=1: never answer from Go's test cache, so a green run means every test ran on this clone.
TESTFLAGS ?= -p 2 -timeout 60m -count=1

.PHONY: all build run test test-unit generate lint k8s operators bench clean

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
## on a local control plane of 500 nodes Arbiter vs kube-scheduler and reclaim latency, a
## backlog of 10,000 pods on 1,250 nodes, Arbiter vs kube-scheduler, and reclaim and preemption
## against Kueue (docs/performance.md), which it builds first (~40 min, and Kueue's first build)
bench: build k8s
	./$(BIN) devcluster build --operators kueue
	$(GO) test -run '^$$' -bench . -benchmem ./scheduler/...
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 90m -v ./bench/

clean:
	rm -rf bin artifacts
