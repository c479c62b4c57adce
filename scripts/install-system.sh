#!/usr/bin/env bash
# System packages mpiarena uses (Debian 12), idempotent: install-system.sh [minimal|full].
#   minimal: a C compiler, Python's venv and one MPI (MPICH): enough for a comparison
#            (mpiarena run, app, import, show, report) as yourself, without root;
#   full:    (the default, what make demo and make test install) every library it compares,
#            NetPIPE's binaries, Chromium for the report's PDF check, Slurm, Lmod, SimGrid,
#            PostgreSQL (for the tests of a server store),
#            what the emulated clusters and the imported suites need.
# Root installs what is missing with apt-get; another user through sudo.
set -euo pipefail
minimal=(gcc make python3 python3-venv procps mpich libmpich-dev)
full=("${minimal[@]}" g++ gfortran iproute2 util-linux openssh-client
      openssh-server openmpi-bin libopenmpi-dev lam-runtime lam4-dev
      pvm pvm-dev
      netpipe-tcp netpipe-mpich2 netpipe-openmpi netpipe-lam netpipe-pvm
      chromium slurmd slurmctld slurm-client munge
      lmod tcl     # environment modules: Lmod; tclsh runs Environment Modules' modulecmd.tcl
      cmake libgsl-dev   # ReproMPI (tests/test_import.py builds shared/reprompi)
      libsimgrid-dev     # SimGrid's SMPI: mpiarena simulate
      postgresql)        # initdb, pg_ctl: the PostgreSQL store's tests start a server of their own
case "${1:-full}" in
  minimal) packages=("${minimal[@]}") ;;
  full) packages=("${full[@]}") ;;
  *) echo "install-system: unknown set '$1'; give minimal or full" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "install-system: missing ${missing[*]}; run as root, or install sudo" >&2
    exit 2
  fi
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
