"""The real local model in tests: ``sift llm serve`` started as a user starts it, in a child process.

``served()`` runs ``sift llm serve --port 0`` (llama.cpp's server on the packaged SmolLM2-135M-Instruct), reads
the ``export SIFT_LLM_*`` lines it prints, waits for ``/v1/models`` and yields them as a dict of settings; on exit
it sends SIGTERM and checks that the server stopped cleanly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

START_S = 60.0


@contextmanager
def served(*args: str) -> Iterator[dict[str, Any]]:
    """The settings a running ``sift llm serve`` prints (``llm_base_url``, ``llm_model``, ``llm_context_tokens``,
    ``llm_max_tokens``, ``llm_timeout_s``, ``llm_tools``, ``llm_roles``), as ``Settings`` field names."""
    cmd = [sys.executable, "-m", "sift.cli", "llm", "serve", "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        found: dict[str, str] = {}
        deadline = time.monotonic() + START_S
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            m = re.match(r"\s*export (SIFT_LLM_\w+)=(\S*)", line)
            if m:
                found[m.group(1)] = m.group(2)
            elif not line or found:  # the export lines are over
                break
        if "SIFT_LLM_BASE_URL" not in found:
            proc.kill()
            raise RuntimeError(f"sift llm serve did not start: {proc.stderr.read() if proc.stderr else ''}")
        settings: dict[str, Any] = {name.lower().removeprefix("sift_"): int(v) if v.isdigit() else v
                                    for name, v in found.items()}
        with urllib.request.urlopen(settings["llm_base_url"] + "/models", timeout=10) as r:
            models = json.loads(r.read())
        assert [m["id"] for m in models["data"]] == [settings["llm_model"]]
        yield settings
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AssertionError("sift llm serve did not stop on SIGTERM") from None
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
