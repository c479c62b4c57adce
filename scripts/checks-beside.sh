#!/usr/bin/env bash
# make test's first lane after make lint: what times nothing, at once on the machine's cores.
# make check first, in the foreground, and beside it from the start the wheel smoke and, two at
# a time, the tests that wait more than they compute (tests/conftest.py: BESIDE); once make
# check has passed, the tests that may share the machine (PARALLEL), two at a time. Of both
# lists, only the tests marked mpi (make check ran the rest). If make check fails, the parts
# beside it are interrupted (their own clean-up runs) and nothing more starts.
# Each part's output follows, the failed ones last, so that a failure's name ends it.
# Usage: scripts/checks-beside.sh [BIN]   (BIN: the venv's bin folder; default .venv/bin)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.venv/bin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# the parts beside, each in a process group of its own (job control on while they start):
# without it an asynchronous command ignores SIGINT, and Python then never raises
# KeyboardInterrupt, so nothing could stop them cleanly
set -m
MPIARENA_TESTS_BESIDE=1 "$bin/python" -m pytest -q -p no:cacheprovider -m 'beside and mpi' -n 2 \
    --dist loadfile -rsfE --durations=10 \
    > "$out/tests beside" 2>&1 & beside=$!
./scripts/wheel-smoke.sh "$bin/python" > "$out/wheel smoke" 2>&1 & wheel=$!
set +m
# as a Ctrl-C would: each part beside and its processes (xdist's workers, the smoke's commands),
# whose tests and commands then clean up after themselves; a Ctrl-C here is passed on to them
interrupt() {
    kill -INT -- "-$beside" "-$wheel" 2>/dev/null
    wait "$beside" "$wheel"
}
trap 'interrupt; exit 130' INT TERM
make --no-print-directory BIN="$bin" check; checked=$?
if [ "$checked" -ne 0 ]; then
    interrupt
    echo "== make check: FAILED (the parts beside it interrupted)"
    exit 1
fi
"$bin/python" -m pytest -q -p no:cacheprovider -m 'parallel and mpi' -n 2 --dist loadfile \
    -rsfE --durations=20 > "$out/parallel tests" 2>&1; tested=$?
wait "$wheel"; smoke=$?
wait "$beside"; waited=$?
declare -A status=(["wheel smoke"]=$smoke ["parallel tests"]=$tested ["tests beside"]=$waited)
failed=()
for part in "wheel smoke" "parallel tests" "tests beside"; do
    if [ "${status[$part]}" -eq 0 ]; then
        echo "== $part: passed"; cat "$out/$part"
    else
        failed+=("$part")
    fi
done
for part in "${failed[@]}"; do
    echo "== $part: FAILED"; cat "$out/$part"
done
[ "${#failed[@]}" -eq 0 ]
