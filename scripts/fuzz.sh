#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each:
#
#   scripts/fuzz.sh [FUZZTIME]     (default 3s; `make test` 3s, `make bench` 60s)
#
# Each package whose tests declare a FuzzXxx is built once with the fuzzing
# instrumentation (`go test -c -fuzz`); its targets are listed by that test
# binary (`-test.list '^Fuzz'`, what `go test -list` runs), so a new target
# runs without being named anywhere, and each is fuzzed from the package's
# directory with the corpus cache `go test -fuzz` uses. A failure prints the
# input the fuzzer saved under the package's testdata/fuzz/: fix the bug,
# then commit that file, and plain `go test` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-3s}
go=${GO:-go}
cache="$("$go" env GOCACHE)/fuzz"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -r -n1 dirname | sort -u)
binary() { echo "$bin/$(echo "${1#./}" | tr / _).test"; }
# Build the packages' binaries two at a time: linking is mostly one core
# each, and with all at once, on a fresh checkout (the build cache is keyed
# by the source's path), each build compiled the packages they share for
# itself: 130 s, against 91 s two at a time and 92 s one at a time. -w:
# without DWARF, a third less linking; stack traces are unaffected.
pids=()
for dir in "${dirs[@]}"; do
  if ((${#pids[@]} == 2)); then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
  "$go" test -c -fuzz '^Fuzz' -ldflags=-w -o "$(binary "$dir")" "$dir" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

# fuzz runs target $name of the package in $dir ($pkg, built as $test).
fuzz() {
  (cd "$dir" && "$test" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" \
    -test.fuzzcachedir "$cache/$pkg" 2>&1)
}
# raced reports whether output $1 is Go 1.26's fuzz coordinator failing a
# target at the end of its -fuzztime with a bare "context deadline
# exceeded" and no input written, when a loaded machine keeps a worker from
# stopping in time (go.dev/issue/75804, fixed in Go 1.27). Such a run is
# fuzzed once more; a run that wrote a failing input fails at once.
raced() {
  ! grep -q 'Failing input written' <<<"$1" && grep -q '^    context deadline exceeded$' <<<"$1"
}

failed=()
count=0
for dir in "${dirs[@]}"; do
  pkg=$("$go" list "$dir")
  test=$(binary "$dir")
  for name in $("$test" -test.list '^Fuzz'); do
    count=$((count + 1))
    start=$SECONDS
    if out=$(fuzz) || { raced "$out" &&
      echo "again $pkg $name: the fuzz coordinator's deadline race, no input written" && out=$(fuzz); }; then
      echo "ok   $pkg $name ($((SECONDS - start))s)"
    else
      echo "FAIL $pkg $name"
      echo "$out"
      sed -n "s|.*Failing input written to \(testdata/fuzz/[^ ]*\).*|reproducer: ${dir#./}/\1 (replay: go test -run '${name}' ${dir})|p" <<<"$out"
      failed+=("$pkg.$name")
    fi
  done
done
if ((count == 0)); then
  echo "no fuzz targets found" >&2
  exit 1
fi
if ((${#failed[@]})); then
  echo "fuzzing failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzzed $count targets for $fuzztime each"
