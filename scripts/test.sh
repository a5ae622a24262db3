#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite: everything on SQLite, then the integration tests again on a
# throwaway PostgreSQL server, and retrieval and the graph on the PostgreSQL search backend (skip both with
# SIFT_TEST_POSTGRES=0). Extra arguments go to the first two pytest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# PostgreSQL server binaries (apt-get as root on a fresh machine) and the driver; tests start their own cluster.
SIFT_PG_BIN="$(bash scripts/pg.sh)"
export SIFT_PG_BIN
python -c "import psycopg" 2>/dev/null || python -m pip install -q "psycopg[binary]>=3.2,<4"
# A headless browser for the docs-page test (apt-get as root on a fresh machine).
SIFT_CHROMIUM="$(bash scripts/chromium.sh)"
export SIFT_CHROMIUM
ruff check .
# The built wheel, installed non-editable into a fresh virtualenv outside the checkout, ingests, asks and serves.
bash scripts/wheel_check.sh
# Static checks run on the package as a wheel lays it out (see scripts/stage_package.py); paths map back.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
python scripts/stage_package.py "$stage"
(cd "$stage" && PYTHONPATH="$stage" lint-imports --config "$OLDPWD/pyproject.toml")
# Types: mypy on the same layout. Its cache outlives the stage (mypy reuses it from any stage directory), so
# only the first run on a checkout pays for analysing the third-party packages (about 75 s of CPU).
(cd "$stage" && mypy --config-file "$OLDPWD/pyproject.toml" --cache-dir "$OLDPWD/.mypy_cache")
# pytest exits 5 when it collects no test: that is a failure here, never a pass.
python -m pytest -n 2 --dist loadfile -q "$@"
if [ "${SIFT_TEST_POSTGRES:-1}" != "0" ]; then
  # The integration tests again with SIFT_DATABASE_URL on PostgreSQL (a database per test), or just what was asked
  # for. test_pg_* already cover both databases; the graph test below starts a child process with a bare
  # environment, so it cannot see the test database.
  if [ $# -gt 0 ]; then
    pg_args=("$@")
  else
    pg_args=(tests/integration --ignore-glob='tests/integration/test_pg_*'
             --deselect tests/integration/test_graph_routes.py::test_graph_thread_survives_a_new_process)
  fi
  SIFT_TEST_DATABASE=postgres python -m pytest -n 2 --dist loadfile -q "${pg_args[@]}"
  # Retrieval and the graph once more with search inside PostgreSQL (SIFT_SEARCH_BACKEND=postgres): the cluster
  # comes from pgserver's binaries (PostgreSQL 16 + pgvector; Debian's package has no pgvector). The LangChain
  # FAISS store wraps a local index file, which this backend does not have.
  if [ $# -eq 0 ]; then
    SIFT_PG_BIN="$(python -c 'from tests.pg import pgvector_bin_dir; print(pgvector_bin_dir())')" \
    SIFT_TEST_DATABASE=postgres SIFT_SEARCH_BACKEND=postgres python -m pytest -n 2 --dist loadfile -q \
      tests/integration/test_search.py tests/integration/test_search_copies.py tests/integration/test_graph_*.py \
      --deselect tests/integration/test_search.py::test_langchain_faiss_store_shares_the_function_index \
      --deselect tests/integration/test_graph_routes.py::test_graph_thread_survives_a_new_process
  fi
fi
