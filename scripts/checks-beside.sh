#!/usr/bin/env bash
# make test's first lane after make lint and make check: what times nothing, at once on the
# machine's cores: the wheel smoke (live), the tests that may share the machine
# (tests/conftest.py: PARALLEL), two at a time, and beside them, one at a time, the tests that
# wait more than they compute (BESIDE); of both, only those marked mpi (make check ran the rest).
# Each one's output follows, the failed ones last, so that a failure's name ends it.
# Usage: scripts/checks-beside.sh [BIN]   (BIN: the venv's bin folder; default .venv/bin)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.venv/bin}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin/python" -m pytest -q -p no:cacheprovider -m 'parallel and mpi' -n 2 --dist loadfile \
    -rsfE --durations=20 > "$out/parallel tests" 2>&1 & tested=$!
MPIARENA_TESTS_BESIDE=1 "$bin/python" -m pytest -q -p no:cacheprovider -m 'beside and mpi' -rsfE --durations=10 \
    > "$out/tests beside" 2>&1 & waited=$!
./scripts/wheel-smoke.sh "$bin/python"; smoke=$?
wait $tested; tested=$?
wait $waited; waited=$?
declare -A status=(["parallel tests"]=$tested ["tests beside"]=$waited)
failed=()
for part in "parallel tests" "tests beside"; do
    if [ "${status[$part]}" -eq 0 ]; then
        echo "== $part: passed"; cat "$out/$part"
    else
        failed+=("$part")
    fi
done
for part in "${failed[@]}"; do
    echo "== $part: FAILED"; cat "$out/$part"
done
[ "$smoke" -eq 0 ] && [ "${#failed[@]}" -eq 0 ]
