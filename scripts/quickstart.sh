#!/usr/bin/env bash
# Set up (sift and the model's files, no torch), ingest this repository into the knowledge base "sift", then
# search it and ask it a question.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
sift ingest . --kb sift
sift kb show sift
sift search "where are gitignore rules applied during the walk" --kb sift -k 5
sift docql '$.code.function("ingest")' --kb sift
sift ask "Where is the RRF fusion score computed?" --kb sift
