#!/usr/bin/env bash
# The package as a user gets it: build the sdist and, from it, the wheel; check both hold every
# file of src/mpiarena; install the wheel into a fresh virtual environment outside the source
# tree and run the main commands from a scratch directory. Any failure stops it with status 1.
# Usage: scripts/wheel-smoke.sh [PYTHON]   (PYTHON has the 'build' package; default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
python=${1:-.venv/bin/python}
[[ $python == /* ]] || python=$src/$python  # the venv's own path, not its target
# Not under /tmp: an emulated node mounts its own /tmp, which would hide the data directory.
tmp=$(mktemp -d /var/tmp/mpiarena-wheel-smoke.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM  # the EXIT trap removes it then too
chmod 755 "$tmp"  # the rank user reads the cores built under it
start=$SECONDS

step() { printf '== wheel smoke (%ss): %s\n' "$((SECONDS - start))" "$*"; }
fail() { echo "wheel smoke: FAILED: $*" >&2; exit 1; }

step "build the sdist, then the wheel from it, in a clean copy of the tree"
# A copy without *.egg-info: setuptools adds every file an old SOURCES.txt lists, which would
# hide a file that package-data leaves out. Built with the venv's setuptools (the [test] extra
# holds the build-system's requirement): with an isolated build environment it took 8.8 s,
# without 2.5 s here, the same files in the sdist and the wheel.
mkdir "$tmp/tree"
tar -C "$src" --exclude=./.venv --exclude=./.git --exclude='*.egg-info' --exclude=__pycache__ \
  --exclude='*.db' -cf - . | tar -C "$tmp/tree" -xf -
(cd "$tmp/tree" && "$python" -m build -q --no-isolation --outdir "$tmp/dist" .) >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log" >&2; fail "python -m build"; }
(cd "$tmp/tree" && "$python" - "$tmp/dist") <<'EOF' \
  || fail "the sdist or the wheel lacks files of src/mpiarena"
import sys, tarfile, zipfile
from pathlib import Path
dist = Path(sys.argv[1])
wanted = {p.relative_to("src").as_posix() for p in Path("src/mpiarena").rglob("*")
          if p.is_file() and "__pycache__" not in p.parts}
sdist, = dist.glob("*.tar.gz")
with tarfile.open(sdist) as tar:
    in_sdist = {n.split("/src/", 1)[1] for n in tar.getnames() if "/src/" in n}
wheel, = dist.glob("*.whl")
in_wheel = set(zipfile.ZipFile(wheel).namelist())
for name, have in (("sdist", in_sdist), ("wheel", in_wheel)):
    if missing := sorted(wanted - have):
        sys.exit(f"{name} lacks {', '.join(missing)}: add them to package-data in pyproject.toml")
print(f"sdist and wheel hold all {len(wanted)} files of src/mpiarena")
EOF

step "install the wheel into a fresh virtual environment"
# With uv, the tests' installer (Makefile), where there, into a venv without pip: the venv and
# pip took 24-28 s in make test's first lane, uv 3-4 s (byte-compiling numpy, scipy and
# matplotlib up front took 25 of 37 s more: pip's --no-compile, uv's default)
uv=$(dirname "$python")/uv
if [[ -x $uv ]]; then
  python3 -m venv --without-pip "$tmp/venv" || fail "python3 -m venv"
  "$uv" pip install -q --python "$tmp/venv/bin/python" "$tmp/dist"/*.whl \
    || fail "uv pip install of the wheel"
else
  python3 -m venv "$tmp/venv" || fail "python3 -m venv"
  "$tmp/venv/bin/pip" install -q --no-compile --disable-pip-version-check "$tmp/dist"/*.whl \
    || fail "pip install of the wheel"
fi
mkdir "$tmp/work" "$tmp/home"
cd "$tmp/work"
export MPIARENA_HOME="$tmp/home"  # cores built from the installed sources, not a cached build
unset PYTHONPATH
unset MPIARENA_IMPLS_PATH  # what make test adds for its own tests (Intel MPI): a user has none
arena="$tmp/venv/bin/mpiarena"
where=$("$tmp/venv/bin/python" -c 'import mpiarena; print(mpiarena.__file__)')
[[ $where == "$tmp/venv/"* ]] || fail "mpiarena imported from $where, not the installed wheel"
[[ $where != "$src/"* ]] || fail "mpiarena imported from the source tree"

step "mpiarena doctor"
"$arena" doctor >doctor.txt || fail "mpiarena doctor"
grep -q "data directory: $tmp/home" doctor.txt || { cat doctor.txt; fail "doctor's data directory"; }
step "mpiarena impls"
"$arena" impls >impls.txt || fail "mpiarena impls"
for id in mpich-4.0.2 openmpi-4.1.4; do
  grep -Eq "^│ $id +│ yes" impls.txt || { cat impls.txt; fail "$id is not usable"; }
done

step "mpiarena run (2 implementations, pingpong, 8 B and 1 KiB)"
"$arena" run --impl mpich-4.0.2 --impl openmpi-4.1.4 --bench pingpong --sizes 8,1K \
  --observations 3 --launches 2 --tables >run.txt || fail "mpiarena run"
grep -q "Who is fastest" run.txt || { cat run.txt; fail "no scoreboard"; }
grep -q "pingpong: half round trip" run.txt || { cat run.txt; fail "no pingpong table"; }

step "mpiarena report latest"
"$arena" report latest -o report.html >/dev/null || fail "mpiarena report"
size=$(stat -c %s report.html)
((size > 50000)) && grep -q "openmpi-4.1.4" report.html \
  && grep -q '<img src="data:image' report.html || fail "report.html is $size bytes, without the run's variants or figures"

step "mpiarena reproduce cleary2006 --quick --cluster local (MPICH 4.0.2)"
# The study's data from the wheel, on this machine: across emulated nodes MPICH 4.0.2 (UCX over
# TCP) hangs in MPI_Finalize now and then, which cost a job its 60 s timeout here
"$arena" reproduce cleary2006 --quick --impl mpich-4.0.2 --cluster local \
  >reproduce.txt 2>reproduce.err || { cat reproduce.err; fail "mpiarena reproduce"; }
grep -q "conclusions: " reproduce.txt && [[ -s reproduce-cleary2006.md ]] \
  || { cat reproduce.txt; fail "no conclusions or no reproduce-cleary2006.md"; }

step "mpiarena app (one source file per library, profiled) and its report"
cat > ring.c <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, x = 1, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double t0 = MPI_Wtime();
    for (int i = 0; i < 100; i++)
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("step %.9f\n", (MPI_Wtime() - t0) / 100);
    MPI_Finalize();
    return 0;
}
C
chmod 644 ring.c
"$arena" app --impl mpich-4.0.2 --impl openmpi-4.1.4 --launches 2 --metric 'step=step (\S+)' \
  -- ring.c >app.txt || { cat app.txt; fail "mpiarena app"; }
grep -q "where the wall-time difference comes from" app.txt || { cat app.txt; fail "no decomposition"; }
"$arena" report latest -o app.html >/dev/null && grep -q '<img src="data:image' app.html \
  || fail "the app run's report"

step "passed"
