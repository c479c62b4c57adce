#!/usr/bin/env bash
# System packages mpiarena measures and needs (Debian 12). Idempotent; run as root.
set -euo pipefail
packages=(gcc g++ gfortran make python3 python3-venv procps iproute2 util-linux openssh-client
          openssh-server mpich libmpich-dev openmpi-bin libopenmpi-dev lam-runtime lam4-dev
          pvm pvm-dev
          netpipe-tcp netpipe-mpich2 netpipe-openmpi netpipe-lam netpipe-pvm
          chromium slurmd slurmctld slurm-client munge
          lmod tcl     # environment modules: Lmod; tclsh runs Environment Modules' modulecmd.tcl
          cmake libgsl-dev   # ReproMPI (tests/test_import.py builds shared/reprompi)
          libsimgrid-dev)    # SimGrid's SMPI: mpiarena simulate
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-system: missing ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 2
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
