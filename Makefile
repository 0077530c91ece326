# kapply — every entry point a developer or CI needs.
SHELL := bash
GO    ?= go
BIN   := $(CURDIR)/bin

.PHONY: all build docs k8s-bin kubectl-bin kapp-bin test check unit demo cluster-up cluster-down bench bench-fleet testdata-openapi release-snapshot clean

all: build

## build: the kapply binary in bin/
build:
	$(GO) build -o $(BIN)/kapply ./cmd/kapply

## docs: man pages of every command (cobra/doc) in $(MANDIR), built with -tags gendocs so that
# cobra/doc stays out of the kapply binary; SOURCE_DATE_EPOCH dates them (reproducible pages)
MANDIR ?= $(BIN)/man
docs:
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct)} $(GO) run -tags gendocs ./cmd/kapply $(MANDIR)
	@echo "man pages in $(MANDIR); read one with: man -l $(MANDIR)/kapply-apply.1"

## k8s-bin: kube-apiserver and etcd at the pinned versions (skipped when present)
k8s-bin:
	bash hack/k8sbin/build.sh $(BIN)

## kubectl-bin: kubectl (and kube-controller-manager) of the API server's version into bin/kubectlcmd
# (skipped when present); `make test` puts it first on PATH for every test that compares with kubectl
kubectl-bin:
	bash hack/kubectlcmd/build.sh $(BIN)/kubectlcmd

## kapp-bin: Carvel kapp v0.64.2, a peer in the benchmark, built outside the tree (skipped when present)
kapp-bin:
	bash hack/kapp/build.sh $(BIN)

## check: gofmt, go vet, go.mod tidy
check:
	@unformatted=$$(gofmt -l cmd pkg internal hack test); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags gendocs ./cmd/kapply
	$(GO) mod tidy -diff

## test: checks, then every test with the race detector, integration tests on a local cluster
## (the HTML report's in headless Chromium, which hack/chromium.sh installs when missing);
## then, without it (thorough: all their generated input), the differential and fuzz-seed tests
## of the hand-written parts against the libraries they replace (docs/guarantees.md)
## kubectl v1.37 from bin/kubectlcmd comes first on PATH: no test compares with another minor, and
## under CI=true (.ci/run) a test missing kubectl, the corpus or Chromium fails instead of skipping
test: k8s-bin kubectl-bin check
	bash hack/chromium.sh
	PATH="$(BIN)/kubectlcmd:$$PATH" $(GO) test -race -count=1 -timeout 60m ./...
	$(GO) test -count=1 -timeout 10m -run '$(HANDWRITTEN_TESTS)' ./pkg/diff ./pkg/load ./pkg/apply ./pkg/cluster

HANDWRITTEN_TESTS := ^(TestEmitYAML|TestKeyLess|FuzzYAMLEmit|TestFastYAML|FuzzFastYAML|TestReadLocal|FuzzReadLocal|TestDecodeList|TestDecodeWritten|FuzzDecodeList|FuzzDecodeWritten|TestWritesThroughTheListsClientAreTheDynamicClients)

## unit: the tests that need no cluster
unit:
	$(GO) test -short -count=1 ./...

## demo: build everything, start a local cluster, apply testdata/demo, show it, stop
demo: build k8s-bin
	bash hack/demo.sh

## bench: kapply vs kubectl vs a raw client-go floor on a fresh local cluster (not a test)
# Flags through BENCH_FLAGS, e.g. BENCH_FLAGS='-objects 300 -runs 3 -out bench.md'; see -h.
bench: build k8s-bin
	$(GO) run ./hack/bench $(BENCH_FLAGS)

## bench-fleet: kapply over 30 contexts on three local servers x 200 objects, against three concurrent
# single-server runs and a shell loop over the contexts, creating then re-applying; peak RSS by
# --max-parallel and by contexts (hack/bench -fleet). Remote-like servers: BENCH_FLAGS='-latency 25ms -runs 3'
bench-fleet: build k8s-bin
	$(GO) run ./hack/bench -fleet -objects 200 -contexts 30 $(BENCH_FLAGS)

## kubectl-cmd-tests: kubectl's own test/cmd suites for apply, diff and --save-config, kapply in kubectl's place
# (also run by `make test`, as test/kubectlcmd); suites as arguments through SUITES='run_kubectl_diff_tests ...'.
kubectl-cmd-tests: build k8s-bin
	bash hack/kubectlcmd/run.sh $(SUITES)

## cluster-up / cluster-down: one long-running local cluster for manual use
cluster-up: k8s-bin
	bash hack/cluster.sh up
cluster-down:
	bash hack/cluster.sh down

## testdata-openapi: refresh the OpenAPI v3 documents the engine tests use
testdata-openapi: k8s-bin
	bash hack/testdata-openapi.sh

## release-snapshot: the release's archives (linux, darwin, windows x amd64, arm64), checksums and
# krew manifest into DIST (default dist/), with goreleaser --snapshot: nothing is published.
# Also run, and its archives checked, by `make test` (test/release).
release-snapshot:
	bash hack/release/snapshot.sh $(DIST)

clean:
	rm -rf $(BIN)/kapply $(BIN)/kapply-cluster $(BIN)/tools dist
