#!/usr/bin/env bash
# Set up .venv (sift and the model's files, no torch), ingest sift's own ingestion package (ingest/: 37 Python
# files, about 370 chunks) into the knowledge base "sift-ingest", then search it, query it with DocQL and ask it
# a question. The data directory is ./.sift here, found from this folder and every folder below it.
set -euo pipefail
cd "$(dirname "$0")/.."
KB=sift-ingest
echo "quickstart: installing sift into .venv (a minute or two, more on a slow network), then ingesting ingest/"
echo "quickstart: (37 files; about 40 CPU-seconds of embedding: under a minute on an idle 2-core machine, up to"
echo "quickstart: about 2 minutes on a busy one); all of sift (~430 files, ~5,000 chunks) takes about 14 times as long"
bash scripts/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
set -x
sift ingest ingest --kb "$KB"
sift kb show "$KB"
sift search "where are gitignore rules applied during the walk" --kb "$KB" -k 5
sift docql '$.code.function("ingest")' --kb "$KB"
sift ask "Where are .gitignore rules applied during the walk?" --kb "$KB"
{ set +x; } 2>/dev/null
cat <<EOF

Done. sift is installed in .venv; to put \`sift\` on PATH in this shell, run:

    . .venv/bin/activate

then, from this folder or any folder below it:

    sift ask "What happens when an ingest crashes halfway?" --kb $KB
    sift ingest . --kb sift      # all of sift: about 14 times as long as the ingest above
EOF
