# Samsa's everyday commands. `make test` is what CI runs (.ci/run).
GO ?= go
PKGS := ./...
# Build tags of every go command here. pebblegozstd: pebble (streams/state)
# compresses with the pure-Go zstd instead of cgo's DataDog/zstd, so the
# tree builds and tests without a C toolchain. Scripts that call go
# directly (bench/*/run.sh, test/fuzz-campaign.sh) add the same tag.
TAGS ?= pebblegozstd
GOTAGS = -tags '$(TAGS)'

.PHONY: procs console-screenshots groupsref mirror-soak streams-eos-soak quota-rates test unit race noraces lint fuzz fuzz-campaign bench bench-connect bench-streams bench-mirror bench-share bench-console build compat registry-on-kafka failover-soak grow-soak

# make build stamps VERSION into the binary (samsa --version): the nearest
# tag, else the commit, with -dirty for uncommitted changes. Without it the
# binary falls back to what Go records (the module version of go install
# ...@v1.2.3, the commit where Go stamps it), else "(devel)". BIN is where
# the binary goes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
BIN ?= bin/samsa

build:
	$(GO) build $(GOTAGS) -ldflags "-X github.com/samsa-io/samsa/internal/version.Version=$(VERSION)" -o $(BIN) ./cmd/samsa

# lint, then every test with the race detector, then the tests that skip
# under it, then the tests of other processes.
test: lint race noraces procs

unit:
	$(GO) test $(GOTAGS) -count=1 $(PKGS)

# Packages whose tests drive other processes (samsa serve and its nodes,
# samsa mirror and connect, the JVM, a browser): the race detector
# instruments only the test binary, here a harness and its clients, so they
# run without it (procs), which saves CI minutes of instrumented clients
# competing with the processes under test. Every other package runs with it.
PROC_PKGS := ./test/cluster ./test/connectdiff ./test/connectfail ./test/connectors ./test/console ./test/groupsref ./test/mirrorfail ./test/streamseos
RACE_PKGS = $(filter-out $(patsubst ./%,github.com/samsa-io/samsa/%,$(PROC_PKGS)),$(shell $(GO) list $(GOTAGS) $(PKGS)))

race:
	$(GO) test $(GOTAGS) -count=1 -race -timeout 20m $(RACE_PKGS)

procs:
	$(GO) test $(GOTAGS) -count=1 -timeout 20m $(PROC_PKGS)

# The race detector changes allocation counts, so allocation tests skip under
# it; they are named Test...Allocs (internal/archtest fails on a test that
# depends on the race detector under another name) and run here without it.
# Only the packages that have such tests are built again without the race
# detector (found by name, so a new one is never left out): linking every
# package's test binary a second time cost CI a minute and a half.
ALLOCS_PKGS = $(shell grep -rl --include='*_test.go' 'func Test[A-Za-z0-9_]*Allocs(t \*testing.T)' . | xargs -r -n1 dirname | sort -u)
noraces:
	$(GO) test $(GOTAGS) -count=1 -run 'Allocs$$' $(ALLOCS_PKGS)

# gofmt, go vet, and the layering test (internal/archtest): a package that
# imports a layer above it fails.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(GOTAGS) $(PKGS)
	$(GO) test $(GOTAGS) -count=1 ./internal/archtest/

# Short runs of every fuzz target (FUZZTIME per target), one worker each
# (FUZZPARALLEL). New inputs get FUZZMINIMIZE minimization tries: the
# request fuzzers pay a broker round trip per try, and a minimization cut
# short by time restarts the worker.
FUZZTIME ?= 20s
FUZZPARALLEL ?= 1
FUZZMINIMIZE ?= 50x
fuzz:
	@for pkg in $$($(GO) list $(GOTAGS) ./...); do \
	  for f in $$($(GO) test $(GOTAGS) -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $(GOTAGS) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) \
	      -fuzzminimizetime $(FUZZMINIMIZE) -parallel $(FUZZPARALLEL) $$pkg || exit 1; \
	  done; \
	done

# The campaign of docs/FUZZING.md: every target in turn, FUZZTIME per API
# key (3m unless given on the command line) and DECODER_FUZZTIME (5m) per
# other target, then the table of executions. TARGETS selects by name (a
# regexp).
DECODER_FUZZTIME ?= 5m
fuzz-campaign:
	FUZZTIME=$(if $(filter command line,$(origin FUZZTIME)),$(FUZZTIME),3m) DECODER_FUZZTIME=$(DECODER_FUZZTIME) \
	  MINIMIZE=$(FUZZMINIMIZE) test/fuzz-campaign.sh '$(or $(TARGETS),.)'

# The console's browser test (test/console: Playwright in Debian's headless
# Chromium) with its screenshots written to docs/console/ (laptop size,
# two phone-size pages, one dark page); make test runs the same test with
# the screenshots in a temporary directory, so CI never dirties the tree.
console-screenshots:
	SAMSA_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console SAMSA_REQUIRE_BROWSER=1 $(GO) test $(GOTAGS) -count=1 -run '^TestConsoleInBrowser$$' ./test/console/

# Every client family against a fresh broker each, a cluster (COMPAT_CLUSTER)
# and a secured broker (COMPAT_SECURITY) (test/compat/README.md);
# writes docs/COMPATIBILITY.md. SUITES selects (default: all).
compat:
	test/compat/run.sh $(SUITES)

# The Schema Registry suite (test/compat/registry) with Apache Kafka 4.4 as
# the store: a single Kafka node from bench/compare's Maven Central jars on
# free loopback ports, two `samsa registry` instances against it, every
# client check and the primary killed (docs/DESIGN-schemaregistry.md has
# the outcome).
registry-on-kafka:
	test/compat/registry/on-kafka.sh

# Benchmarks; BENCH selects, COUNT repeats (compare runs with benchstat).
BENCH ?= .
COUNT ?= 5
bench:
	$(GO) test $(GOTAGS) -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) $(PKGS)

# Connect's benchmark (issue 18, bench/connect/run.sh): FileStreamSource →
# broker → FileStreamSink on samsa connect and on Apache Kafka's standalone
# worker, one Samsa broker; records/s, RSS and CPU per record, medians of
# RUNS (3) with LINES (1000000) lines. A timing, so by hand, not in make
# test; docs/PERFORMANCE.md#connect records the figures.
bench-connect:
	bench/connect/run.sh

# The streams benchmark (issue 19, bench/streams/run.sh): word count and a
# windowed count on Kafka Streams 4.4 and on Samsa's library
# (bench/streams/samsa-app; RUNTIMES=java or samsa for one side), one Samsa
# broker; records/s, RSS and CPU per record, medians of RUNS (3) with
# RECORDS (1000000) and the Samsa/Java ratio. By hand, not in make test;
# docs/PERFORMANCE.md#streams records the figures.
bench-streams:
	bench/streams/run.sh

# The mirroring benchmark (issue 20, bench/mirror/run.sh): samsa mirror
# (translate, exactly once, offset preserving; MODES selects) against
# Apache Kafka's MirrorMaker 2 with the same mm2.properties, two Samsa
# brokers; backlog records/s, end-to-end lag under load, CPU per record
# and RSS, medians of RUNS (3) with RECORDS (1000000) and the Samsa/MM2
# ratio. By hand, not in make test; docs/PERFORMANCE.md#mirroring.
bench-mirror:
	bench/mirror/run.sh

# The Java clients' share group and streams group scenarios (issue 21,
# test/groupsref) against Apache Kafka 4.4 as well as Samsa: make test runs
# the Samsa side only.
groupsref:
	SAMSA_GROUPSREF_KAFKA=1 $(GO) test $(GOTAGS) -count=1 -v -timeout 30m ./test/groupsref/

# The share-group benchmark (issue 21, bench/share/run.sh): a share
# group's delivery throughput with 1, 4 and 16 franz-go share consumers on
# one partition (CONSUMERS), Samsa against Apache Kafka 4.4; records/s,
# duplicates, broker CPU per record and RSS, medians of RUNS (3) with
# RECORDS (500000) and the Samsa/Kafka ratio. By hand, not in make test;
# docs/PERFORMANCE.md#share-groups.
bench-share:
	bench/share/run.sh

# The web console's large-data benchmark (issue 22, bench/console/run.sh):
# a topic of 10,000,000 records in 1,000 partitions, 10,000 partitions in
# a cluster of NODES (3) samsa serve; every console page's median and p90
# of N (20) requests against 300 ms, the Kafka requests behind each and
# the records the message browser reads. DATA keeps the loaded cluster for
# a rerun. By hand, not in make test; docs/PERFORMANCE.md#console.
bench-console:
	bench/console/run.sh

# Client quota rates (issue 14): a producer and a consumer capped at
# 1 MiB/s by client quotas, with franz-go and with librdkafka
# (test/compat/go/quotaprobe, cgo), each measured over 30 s after a
# warm-up of 10 and held to ±10% of the quota; COUNT runs of each. A rate
# is a timing, so it is not asserted in make test; docs/DESIGN-quotas.md
# records the figures.
QUOTA_COUNT ?= 3
quota-rates:
	cd test/compat/go && CGO_ENABLED=1 $(GO) build $(GOTAGS) -o $(CURDIR)/bin/quotaprobe ./quotaprobe
	SAMSA_QUOTA_RATES=1 SAMSA_QUOTA_LIBRDKAFKA=$(CURDIR)/bin/quotaprobe $(GO) test $(GOTAGS) -count=$(QUOTA_COUNT) -timeout 30m \
	  -run '^TestQuotasHold' -v ./internal/broker | grep -E 'quota|^(--- |ok|FAIL)'

# The long failover run of issue 12 (test/cluster): 50 kill -9 and 20
# SIGTERM of a partition leader on five broker processes under load, then
# the history checker and the replica comparison; it prints the failover
# times' median and p99 (docs/DESIGN-cluster.md records them). KILLS and
# TERMS change the counts, HISTORY keeps the history file.
KILLS ?= 50
TERMS ?= 20
HISTORY ?=
failover-soak:
	$(GO) test $(GOTAGS) -count=1 -timeout 60m -run '^TestFailoverUnderLoad$$' -v ./test/cluster \
	  -failover.kills=$(KILLS) -failover.terms=$(TERMS) $(if $(HISTORY),-failover.history=$(abspath $(HISTORY)))

# Issue 15's grow-and-shrink run with more data than CI's: three brokers
# under acks=all load, a fourth added and rebalanced onto, one of the
# originals drained and stopped (docs/DESIGN-balance.md has the figures).
BULK_MB ?= 512
STEADY ?= 20s
grow-soak:
	$(GO) test $(GOTAGS) -count=1 -timeout 60m -run '^TestGrowRebalanceDecommission$$' -v ./test/cluster \
	  -grow.bulk-mb=$(BULK_MB) -grow.steady=$(STEADY) $(if $(HISTORY),-grow.history=$(abspath $(HISTORY)))

# The exactly-once kill test of the streams library for SOAK (10m unless
# given): three instances under load, one killed every 8 s
# (docs/PERFORMANCE.md#streams records the figures).
SOAK ?= 10m
streams-eos-soak:
	SAMSA_STREAMS_SOAK=$(SOAK) $(GO) test $(GOTAGS) -count=1 -v -timeout 0 -run TestExactlyOnceUnderKills ./test/streamseos/

# Issue 20: the mirror process killed with SIGKILL three times under an
# acks=all load, both modes, Samsa and Apache Kafka as the source, for SOAK
# (12 s in make test).
mirror-soak:
	SAMSA_MIRROR_SOAK=$(SOAK) $(GO) test $(GOTAGS) -count=1 -v -timeout 0 ./test/mirrorfail/
