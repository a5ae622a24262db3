#!/usr/bin/env bash
# Make a headless browser available (Debian's `chromium` package) and print its path. The docs-page test renders
# /schema/swagger in it with every host but 127.0.0.1 unresolvable, to prove the page needs no network.
set -euo pipefail
bin="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$bin" ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends chromium >&2
  bin="$(command -v chromium || true)"
fi
[ -n "$bin" ] || { echo "chromium not found after install" >&2; exit 1; }
echo "$bin"
