#!/usr/bin/env bash
# Make PostgreSQL server binaries available (Debian's `postgresql` package) and print their directory.
# The tests start their own throwaway cluster from these (tests/pg.py); no system cluster is created or started.
set -euo pipefail
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
bin="$(find_bin)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  # Do not let the package create and start a "main" cluster on port 5432: nothing here uses it.
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    $SUDO mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2
  bin="$(find_bin)"
fi
[ -x "$bin/initdb" ] || { echo "PostgreSQL server binaries not found after install" >&2; exit 1; }
echo "$bin"
