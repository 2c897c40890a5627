# lakesql build and test entry points. `make test` is what CI runs.
GO       ?= go
# duckdb_arrow turns on DuckDB's Arrow interface in duckdb-go.
TAGS     := duckdb_arrow
GOFLAGS_ := -tags=$(TAGS)
FUZZTIME ?= 5s

.PHONY: build test vet unit fuzz bench clean

build:
	$(GO) build $(GOFLAGS_) -o bin/lakesql ./cmd/lakesql

test: vet unit fuzz

vet:
	$(GO) vet $(GOFLAGS_) ./...

unit:
	$(GO) test $(GOFLAGS_) -count=1 -timeout 20m ./...

# A short run of every fuzz target over input from outside.
fuzz:
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseActions$$' -fuzztime $(FUZZTIME) ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzParseSchema$$' -fuzztime $(FUZZTIME) ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzDecodeDeletionVector$$' -fuzztime $(FUZZTIME) ./tableformat/delta
	$(GO) test $(GOFLAGS_) -run '^$$' -fuzz '^FuzzReadCheckpointParquet$$' -fuzztime $(FUZZTIME) ./tableformat/delta

bench:
	$(GO) test $(GOFLAGS_) -run '^$$' -bench . -benchtime 20x ./tableformat/delta

clean:
	rm -rf bin
