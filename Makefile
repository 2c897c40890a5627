# lakesql build and test entry points. `make test` is what CI runs.
SHELL    := /bin/bash
GO       ?= go
# duckdb_arrow turns on DuckDB's Arrow interface in duckdb-go.
TAGS     := duckdb_arrow
GOFLAGS_ := -tags=$(TAGS)

.PHONY: build test vet unit reports fuzz bench clients interop clean

build:
	$(GO) build $(GOFLAGS_) -o bin/lakesql ./cmd/lakesql

test: vet unit reports fuzz

# regexicu is a module of its own (go-icu-regex's stand-in), outside ./...
vet:
	$(GO) vet $(GOFLAGS_) ./...
	cd regexicu && $(GO) vet ./...

# versitygw, the S3 server tests run (internal/s3test), built from the module
# proxy. A file target, so it is built once; delete it to change versions.
bin/versitygw:
	GOBIN=$(CURDIR)/bin $(GO) install github.com/versity/versitygw/cmd/versitygw@v1.8.0

# The tests whose one-line reports we want to see run apart, verbosely (a
# failing hostile probe keeps its indented details).
REPORTS := ^(TestGoldenTables|TestMemoryOneLargeEpoch|TestHostile)$$

unit: bin/versitygw
	$(GO) test $(GOFLAGS_) -count=1 -timeout 20m -skip '$(REPORTS)' ./...
	cd regexicu && $(GO) test -count=1 ./...

reports: bin/versitygw
	@set -o pipefail; $(GO) test $(GOFLAGS_) -count=1 -timeout 10m -run '$(REPORTS)' -v ./tableformat/delta ./sqlsink ./cmd/lakesql \
		| grep -E '^(golden|memory|hostile|--- |ok|FAIL|panic|    hostile_|        )'

# A short run of every fuzz target over input from outside, each for a
# number of executions (seed corpus included) that takes about five seconds
# here. Not a -fuzztime duration: Go 1.26's coordinator races its own deadline
# and can fail a clean run with a bare "context deadline exceeded"
# (go.dev/issue/75804); a count has no deadline to race.
fuzz1 = $(GO) test $(GOFLAGS_) -timeout 5m -run '^$$' -fuzz '^$(1)$$' -fuzztime $(2)x -fuzzminimizetime 1s $(3)

fuzz: bin/versitygw
	$(call fuzz1,FuzzParseActions,200,./tableformat/delta)
	$(call fuzz1,FuzzParseSchema,10000,./tableformat/delta)
	$(call fuzz1,FuzzDecodeDeletionVector,10000,./tableformat/delta)
	$(call fuzz1,FuzzReadCheckpointParquet,1500,./tableformat/delta)
	$(call fuzz1,FuzzLocalPath,10000,./tableformat/iceberg)
	$(call fuzz1,FuzzParseTransform,60000,./catalogadapter)
	$(call fuzz1,FuzzProviderInputs,600,./catalogadapter/deltalake)
	$(call fuzz1,FuzzMachine,4000,./sqlsink)
	$(call fuzz1,FuzzParse,300,./sinkddl)
	$(call fuzz1,FuzzCommandPackets,600,./planner/wire)
	$(call fuzz1,FuzzInterpolate,1500,./driver)
	$(call fuzz1,FuzzParseScript,100,./sqllogictest)

# The client matrix (clients/SCENARIO.md): a real `lakesql serve` driven by
# each common MySQL client, pinned versions installed under build/clients;
# CLIENTS=pymysql,go-sql-driver for a subset.
clients: build
	clients/run

# lakesql against Spark (Delta, Iceberg), delta-rs and pyiceberg, each way
# (README "Interoperability"); pinned versions installed under build/interop.
interop: build bin/versitygw
	interop/run

# Every workload against its reference (README "Performance");
# BENCHFLAGS=--quick for about two minutes.
BENCHFLAGS ?=
bench: build
	./bin/lakesql bench $(BENCHFLAGS)

clean:
	rm -rf bin build
