#!/usr/bin/env bash
# Makes the pgvector `vector` extension available to the local PostgreSQL 15
# server (Debian bookworm, run as root).
#
# Why build from source: bookworm ships no postgresql-15-pgvector binary, and
# we must not mix trixie binaries into a bookworm system. So we add only a
# trixie *deb-src* entry (source indexes never feed binary installs), fetch the
# Debian-maintained pgvector source, and build it against the bookworm
# postgresql-server-dev-15 headers.
#
# Idempotent: exits immediately if the extension is already installed.
set -euo pipefail

PG_MAJOR=15
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
EXT_DIR="/usr/share/postgresql/${PG_MAJOR}/extension"
LIB_DIR="/usr/lib/postgresql/${PG_MAJOR}/lib"
SRC_SUITE="trixie"
SRC_LIST="/etc/apt/sources.list.d/pgvector-${SRC_SUITE}-src.sources"
PGHOST_="${PGHOST:-127.0.0.1}"
PGPORT_="${PGPORT:-5432}"

log() { printf '[install-pgvector] %s\n' "$*"; }
die() { printf '[install-pgvector] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ -f "${EXT_DIR}/vector.control" && -f "${LIB_DIR}/vector.so" ]]; then
  log "vector extension already installed (${EXT_DIR}/vector.control); nothing to do"
  exit 0
fi

[[ $(id -u) -eq 0 ]] || die "must run as root (installs packages and writes to ${LIB_DIR})"

start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# Wait for a concurrent apt/dpkg instead of failing on the lock.
APT_OPTS=(-o DPkg::Lock::Timeout=300 -o Acquire::Retries=3)

# --- Find the Debian mirror the machine already uses ------------------------
# Looks for an enabled binary ("deb") entry for the running codename in both
# the classic one-line format and the deb822 .sources format. Files with other
# extensions (e.g. *.disabled) are ignored, exactly as apt ignores them.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n "$codename" ]] || die "cannot determine distribution codename from /etc/os-release"

find_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    awk -v c="$codename" '
      { sub(/#.*/, "") }
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }   # skip [options]
        if ($(i + 1) == c && $i ~ /^https?:\/\//) { print $i; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    awk -v c="$codename" '
      function flush() {
        if (!found && uri != "" && enabled != "no" &&
            types ~ /(^| )deb( |$)/ && (suites " ") ~ (" " c " ")) { print uri; found = 1 }
        types = suites = uri = enabled = ""
      }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      tolower($1) == "types:"   { $1 = ""; types = $0 }
      tolower($1) == "suites:"  { $1 = ""; suites = $0 }
      tolower($1) == "enabled:" { enabled = tolower($2) }
      tolower($1) == "uris:"    { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { uri = $i; break } }
      END { flush() }' "$f"
  done
}

# sed (not head) reads all input, so no SIGPIPE under pipefail.
mirror=$(find_mirror | sed -n 1p)
if [[ -z "$mirror" ]]; then
  mirror="http://deb.debian.org/debian"
  log "no '${codename}' mirror found in apt sources; falling back to ${mirror}"
fi
mirror="${mirror%/}"
log "using mirror ${mirror} (from the existing '${codename}' apt source)"

# The source entry is only needed for this build; remove it on any exit so
# later `apt-get update` runs don't keep fetching trixie Sources indexes
# (the cached index is pruned by the next apt-get update).
workdir="" scratch=""
cleanup() {
  rm -f "$SRC_LIST"
  [[ -n "$workdir" ]] && rm -rf "$workdir"
  [[ -n "$scratch" ]] && psql -X -q -h "$PGHOST_" -p "$PGPORT_" -U postgres -d postgres \
    -c "drop database if exists ${scratch}" >/dev/null 2>&1
  return 0
}
trap cleanup EXIT

# --- Add the trixie deb-src entry (source indexes only) ---------------------
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
{
  echo "# Added by scripts/install-pgvector.sh: source-only, used to build pgvector for PG ${PG_MAJOR}."
  echo "Types: deb-src"
  echo "URIs: ${mirror}"
  echo "Suites: ${SRC_SUITE}"
  echo "Components: main"
  [[ -f "$keyring" ]] && echo "Signed-By: ${keyring}"
} > "$SRC_LIST"
log "wrote ${SRC_LIST}"

log "apt-get update"
apt-get "${APT_OPTS[@]}" -qq update

# A deb-src entry adds only Sources indexes; make sure no trixie *binary*
# index is known to apt (that is what could pull trixie binaries in via
# install/upgrade). `apt-cache policy` lists binary Packages indexes only.
if apt-cache policy | grep -Eq "n=${SRC_SUITE}[,[:space:]]"; then
  die "apt knows a ${SRC_SUITE} binary package index; refusing to install packages that could come from it"
fi
log "checked: no ${SRC_SUITE} binary package index configured (source-only)"

log "installing build dependencies (postgresql-server-dev-${PG_MAJOR} build-essential dpkg-dev)"
apt-get "${APT_OPTS[@]}" -qq -y --no-install-recommends install \
  "postgresql-server-dev-${PG_MAJOR}" build-essential dpkg-dev >/dev/null

workdir=$(mktemp -d /tmp/pgvector-build.XXXXXX)
# apt downloads as the unprivileged _apt user; give it the directory so the
# fetch stays sandboxed (otherwise apt warns and falls back to root).
chown _apt "$workdir" 2>/dev/null || true

log "fetching pgvector source from ${SRC_SUITE} into ${workdir}"
# pgvector/<suite> pins the source to trixie even if other deb-src entries
# (e.g. an older bookworm pgvector) exist. The download is verified against
# the signed trixie InRelease, so --allow-unauthenticated is not needed.
(cd "$workdir" && apt-get "${APT_OPTS[@]}" -qq source --only-source "pgvector/${SRC_SUITE}" >/dev/null)

srcdir=$(find "$workdir" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n1)
[[ -n "$srcdir" ]] || die "apt-get source did not produce a pgvector-* directory"
log "building $(basename "$srcdir")"
# OPTFLAGS= drops pgvector's default -march=native (as Debian's own build
# does), so the installed library also runs on a different CPU than the
# build host (e.g. a cached image).
make -C "$srcdir" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS= >/dev/null
make -C "$srcdir" -s PG_CONFIG="$PG_CONFIG" OPTFLAGS= install >/dev/null
log "installed vector $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "${EXT_DIR}/vector.control") into ${EXT_DIR}"

# --- Verify against the running server --------------------------------------
pg_isready -q -h "$PGHOST_" -p "$PGPORT_" || die "postgres not reachable on ${PGHOST_}:${PGPORT_}; cannot verify"
psql_() { psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U postgres "$@"; }
scratch="pgvector_check_$$"
psql_ -d postgres -c "create database ${scratch}"
psql_ -d "$scratch" -c "create extension if not exists vector" >/dev/null
ver=$(psql_ -d "$scratch" -At -c "select extversion from pg_extension where extname = 'vector'")
psql_ -d "$scratch" -At -c "select '[1,2,3]'::vector <-> '[1,2,4]'::vector" >/dev/null
log "verified: create extension vector works (version ${ver})"
log "done in $(( $(date +%s) - start ))s"
