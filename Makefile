# lakesql build and test entry points. `make test` is what CI runs.
SHELL    := /bin/bash
GO       ?= go
# duckdb_arrow turns on DuckDB's Arrow interface in duckdb-go.
TAGS     := duckdb_arrow
GOFLAGS_ := -tags=$(TAGS)
FUZZTIME ?= 5s

.PHONY: build test vet unit reports fuzz bench clean

build:
	$(GO) build $(GOFLAGS_) -o bin/lakesql ./cmd/lakesql

test: vet unit reports fuzz

vet:
	$(GO) vet $(GOFLAGS_) ./...

# versitygw, the S3 server tests run (internal/s3test), built from the module
# proxy. A file target, so it is built once; delete it to change versions.
bin/versitygw:
	GOBIN=$(CURDIR)/bin $(GO) install github.com/versity/versitygw/cmd/versitygw@v1.8.0

# The tests whose one-line reports we want to see run apart, verbosely.
REPORTS := ^(TestGoldenTables|TestMemoryOneLargeEpoch)$$

unit: bin/versitygw
	$(GO) test $(GOFLAGS_) -count=1 -timeout 20m -skip '$(REPORTS)' ./...

reports: bin/versitygw
	@set -o pipefail; $(GO) test $(GOFLAGS_) -count=1 -timeout 10m -run '$(REPORTS)' -v ./tableformat/delta ./sqlsink \
		| grep -E '^(golden|memory|--- |ok|FAIL|panic)'

# A short run of every fuzz target over input from outside.
fuzz: bin/versitygw
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseActions$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseSchema$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzDecodeDeletionVector$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzReadCheckpointParquet$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseTransform$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./catalogadapter
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzProviderInputs$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./catalogadapter/deltalake
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzMachine$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./sqlsink
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./planner
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzInterpolate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./driver
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseScript$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1s ./sqllogictest

# Every workload against its reference (README "Performance");
# BENCHFLAGS=--quick for about two minutes.
BENCHFLAGS ?=
bench: build
	./bin/lakesql bench $(BENCHFLAGS)

clean:
	rm -rf bin
