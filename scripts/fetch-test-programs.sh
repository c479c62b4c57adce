#!/usr/bin/env bash
# Third-party MPI programs the tests build per library with their own build systems (Debian 12):
# NetPIPE 3.7.2's original source, from Debian's source archive, unpacked under
# $MPIARENA_TEST_PROGRAMS (default /var/lib/mpiarena/test-programs). Idempotent; run as root.
set -euo pipefail
dest=${MPIARENA_TEST_PROGRAMS:-/var/lib/mpiarena/test-programs}
netpipe=$dest/netpipe-3.7.2
tarball=netpipe_3.7.2.orig.tar.gz
sha256=13dac884ff52951636f651c421f5ff4a853218a95aa28a4a852402ee385a2ab8
[ -f "$netpipe/makefile" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "fetch-test-programs: no $netpipe; run as root to fetch NetPIPE's source from Debian's" \
       "source archive (apt-get source --download-only netpipe) into it" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial"
printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  > "$tmp/src.sources"
apt=(apt-get -q -o "Dir::Etc::sourcelist=$tmp/src.sources" -o Dir::Etc::sourceparts=/dev/null
     -o "Dir::State::Lists=$tmp/lists" -o APT::Sandbox::User=root)
"${apt[@]}" update >/dev/null
# the Debian packaging tarball is gone from the archive (404): only the original source is needed
(cd "$tmp" && "${apt[@]}" source --download-only netpipe >/dev/null 2>&1) || true
if [ ! -f "$tmp/$tarball" ]; then
  echo "fetch-test-programs: apt-get source netpipe gave no $tarball" >&2
  exit 1
fi
echo "$sha256  $tmp/$tarball" | sha256sum -c --quiet
mkdir -p "$tmp/unpacked" "$dest"
tar xzf "$tmp/$tarball" -C "$tmp/unpacked"
chmod -R a+rX "$tmp/unpacked"
mv "$tmp/unpacked/NetPIPE-3.7.2" "$netpipe"
echo "fetch-test-programs: NetPIPE 3.7.2 in $netpipe"
