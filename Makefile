# The two commands of the README: `make run` and `make test`.
GO ?= go

.PHONY: run test bench lint build

run:
	$(GO) run ./cmd/agentline

test:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# Long load and soak runs; results go to docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint:
	gofmt -l . | (! grep .)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

build:
	$(GO) build -o bin/agentline ./cmd/agentline
