#!/usr/bin/env bash
# Refresh the Swagger UI files served at /schema/swagger from the npm package swagger-ui-dist, pinned by version
# and checked against the registry's sha512. The docs pages then render with no network.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="5.35.0"
INTEGRITY="sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ=="
dest="api/static/swagger-ui"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
curl -fsSL "https://registry.npmjs.org/swagger-ui-dist/-/swagger-ui-dist-${VERSION}.tgz" -o "$tmp/pkg.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tmp/pkg.tgz" | base64 -w0)"
[ "$actual" = "$INTEGRITY" ] || { echo "integrity mismatch: $actual" >&2; exit 1; }
tar -xzf "$tmp/pkg.tgz" -C "$tmp"
mkdir -p "$dest"
for f in swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui-standalone-preset.js \
         swagger-ui-standalone-preset.js.LICENSE.txt swagger-ui.css favicon-32x32.png LICENSE NOTICE; do
  cp "$tmp/package/$f" "$dest/$f"
done
# The bundles end with a sourceMappingURL; the maps are not shipped, so drop the reference (no 404s).
sed -i '/^\/\/# sourceMappingURL=/d' "$dest/swagger-ui-bundle.js" "$dest/swagger-ui-standalone-preset.js"
sed -i 's#/\*\# sourceMappingURL=[^*]*\*/##' "$dest/swagger-ui.css"
echo "$VERSION" > "$dest/VERSION"
echo "swagger-ui-dist $VERSION -> $dest"
