# The two commands of the README: `make run` and `make test`.
GO ?= go
# -race also turns on the compiler's unsafe.Pointer checks (checkptr)
# everywhere; in modernc.org's SQLite, C translated to Go that does pointer
# arithmetic by design, they found nothing of ours and cost over half of
# the store tests' CPU, so they are off there alone. The race detector
# itself still covers every package.
RACE = -race -gcflags='modernc.org/...=-d=checkptr=0'

.PHONY: run test bench lint build e2e-cluster

# Built, then run as itself: `go run` exits 1 whenever it gets SIGINT
# (however its program ends), so Ctrl-C made make print "Error 1" after a
# clean shutdown. agentline exits 0 after a clean shutdown on SIGINT/SIGTERM.
run:
	$(GO) build -o bin/agentline ./cmd/agentline
	bin/agentline

# Every fuzz target runs briefly too (scripts/fuzz.sh finds them). The
# app package's end-to-end and browser tests take several minutes under
# -race on two cores: past go test's default 10-minute bound on a loaded
# machine, so the bound is raised. go test starts packages in the order
# they are named (./... adds the rest once each): the app package, the
# longest by far, comes first, so that it ends before the telephony
# package's load test, which it would starve, begins; beside it the
# cluster tests, which mostly wait.
LONGEST = ./internal/app/ ./internal/cluster/

test:
	$(GO) vet ./...
	$(GO) test $(RACE) -count=1 -timeout 30m $(LONGEST) ./...
	GO=$(GO) scripts/fuzz.sh 3s

# The multi-instance tests alone, verbosely: the real binary, three
# instances on one PostgreSQL and one redis-server, drain and faults. `make
# test` runs them too; missing services fail them like CI does.
e2e-cluster:
	AGENTLINE_REQUIRE_POSTGRES=1 AGENTLINE_REQUIRE_REDIS=1 $(GO) test $(RACE) -count=1 -v ./internal/cluster/

# Benchmarks and long load runs; results go to docs/benchmarks.md.
# The relay run puts agentline's relay beside the no-marks pass-through
# floor and the mark-per-delta pass-through at each call count, and the
# relay again recording every call (mode recording, against agentline:
# recording's cost), reporting CPU (per second and per round-tripped
# frame), p50/p99, peak and idle RSS, read and write syscalls per
# round-tripped frame, and agentline's ratios to the two pass-throughs from
# the same run. RELAYLOAD_CALLS (default 100,200,400) and RELAYLOAD_SECONDS
# (default 10) tune it; RELAYLOAD_NODE=1 adds a Node.js pass-through.
#
# The widget run (GET /widget/v1/config + POST /widget/v1/session, 50
# clients for 10 s against a loopback fake provider) runs on SQLite and on
# PostgreSQL + Redis (both required here), reporting req/s, p99 and CPU µs
# per request of agentline, the PostgreSQL cluster and redis-server.
# WIDGETLOAD_CLIENTS and WIDGETLOAD_SECONDS tune it.
#
# The campaign dialer run starts the real binary as a child process (its
# CPU alone is measured, from /proc) against the pretend carrier, on
# SQLite and on PostgreSQL (required here): 3 campaigns of 1,000 contacts
# that all answer busy (no audio), 50 calls a second, reporting the
# server's CPU per dialed call, dials per second at the carrier and the
# time from the start request's answer to the carrier's first create-call
# request (p50 and worst of the 3). About 3 minutes; CAMPAIGNBENCH_CONTACTS
# and CAMPAIGNBENCH_RUNS tune it.
#
# The call cost run puts the whole server (agentline serve in a child
# process, SQLite in a temp dir) under 200 concurrent carrier-shaped calls
# (signed webhook, media stream, a frame each way every 20 ms, stop, the
# completed status callback) of 1 s, 8 s and 24 s against an echoing model,
# measures its CPU from the first call to idle after the end's jobs, and
# reports the cost per call beyond frames and its CPU at 200x24 s against
# the copy-only pass-through floor run in the same go (docs/benchmarks.md,
# "What a call costs beyond its frames"). CALLCOST_CALLS and
# CALLCOST_SECONDS tune it; CALLCOST_CPUPROFILE=path profiles the server.
# The same pattern runs BenchmarkCallCostTracing: two servers at once, one
# with tracing off and one exporting to a loopback OTLP/HTTP receiver, 200
# calls of 8 s each from the same callers, in 5 rounds: tracing's CPU cost
# per relayed frame (median of the rounds) and its bytes and allocations per
# call (docs/benchmarks.md, "What tracing costs"; -v shows every round).
# CALLCOST_TRACING_CALLS, CALLCOST_TRACING_SECONDS and CALLCOST_TRACING_ROUNDS
# tune it. BenchmarkCallCostSetup runs the same calls with no frames, 200 at
# a time in 5 rounds (CALLCOST_SETUP_ROUNDS): a call's setup and end with no
# frame cost to subtract (docs/benchmarks.md, "Setup alone").
# BenchmarkCallCostFloor runs the server (warmed up, as all of these) and
# the copy-only floor side by side, 200 calls of 24 s each at the same time,
# in 3 rounds (CALLCOST_FLOOR_ROUNDS, CALLCOST_FLOOR_SECONDS): the whole
# server's CPU over the floor's, with the machine's load on both alike.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x ./internal/telephony/relay/
	$(GO) test -run '^$$' -bench CallCost -benchtime 1x ./cmd/agentline/
	AGENTLINE_REQUIRE_POSTGRES=1 AGENTLINE_REQUIRE_REDIS=1 $(GO) test -run '^$$' -bench WidgetLoad -benchtime 1x ./internal/app/
	AGENTLINE_REQUIRE_POSTGRES=1 $(GO) test -run '^$$' -bench CampaignDialer -benchtime 1x -timeout 30m ./internal/cluster/
	$(GO) test -run '^$$' -bench Healthz -benchmem ./internal/app/
	$(GO) test -run '^$$' -bench . -benchmem $$($(GO) list ./... | grep -v -e /internal/telephony/relay$$ -e /internal/app$$ -e /internal/cluster$$ -e /cmd/agentline$$)
	GO=$(GO) scripts/fuzz.sh 60s

lint:
	gofmt -l . | (! grep .)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

build:
	$(GO) build -o bin/agentline ./cmd/agentline
