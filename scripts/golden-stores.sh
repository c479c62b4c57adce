#!/bin/sh
# Makes the small stores the golden renders read (tests/golden/*.db.gz) from real runs on this
# machine: see tests/golden/README.md for what each holds. Slow (minutes) and machine-dependent:
# run it only to replace a store, then scripts/update-goldens.py, and review both diffs.
# The eight-library store needs four PyPI releases of MPICH installed under
# MPIARENA_HOME=$EIGHT_HOME (mpiarena install mpich==4.1.3 ... with that variable set).
set -eu
cd "$(dirname "$0")/.."
out=tests/golden
work=${KEEP:-$(mktemp -d)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
bin=${MPIARENA:-.venv/bin/mpiarena}
EIGHT_HOME=${EIGHT_HOME:-/var/lib/mpiarena-answer61}
arena() { "$bin" "$@" || [ $? -eq 4 ]; }  # 4: some cells failed (a release's crash), stored
releases() {  # with the releases installed under $EIGHT_HOME beside this machine's libraries
    env MPIARENA_HOME="$EIGHT_HOME" MPIARENA_IMPLS_PATH=/var/lib/mpiarena/impls "$bin" "$@" ||
        [ $? -eq 4 ]
}
small="--launches 8 --observations 1 --budget off"

arena run --impl mpich-4.0.2,floor --bench pingpong,allreduce --sizes 8,64K $small \
    --db "$work/one.db"
arena run --impl mpich-4.0.2,openmpi-4.1.4,tcp --bench pingpong,sendrecv,allreduce,barrier \
    --sizes 8,4K,1M $small --db "$work/two.db"
arena run --impl mpich-4.0.2,openmpi-4.1.4,mpich-5.0.2,lam-7.1.4 --bench pingpong,allreduce \
    --sizes 8,64K,1M --launches 12 --observations 1 --budget off --db "$work/four.db"
releases run --bench pingpong,allreduce --sizes 8,64K $small --db "$work/eight.db"
arena import osu tests/suite-output/osu-5.3/osu_latency.out tests/suite-output/osu-5.3/osu_bw.out \
    --impl mpich-4.0.2 --db "$work/import.db"
arena program --impl mpich-4.0.2 --impl openmpi-4.1.4 --launches 4 --no-profile \
    --db "$work/program.db" -- tests/programs/allreduce_heavy.c
releases releases mpich --releases 4.1.3,4.3.2 --bench pingpong --sizes 8,64K --np 2 \
    --launches 6 --db "$work/releases.db"
for db in "$work"/*.db; do
    sqlite3 "$db" "PRAGMA journal_mode=DELETE; PRAGMA page_size=1024; VACUUM;" >/dev/null
    gzip -n -9 -c "$db" >"$out/$(basename "$db").gz"
done
ls -l "$out"/*.db.gz
