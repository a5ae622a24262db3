"""`sift llm serve`: a local OpenAI-compatible model server for sift's LLM path, with no API key and no network.

llama.cpp's own server (the `local-llm` extra) on a packaged model, by default SmolLM2-135M-Instruct
(Apache-2.0). It binds 127.0.0.1, prints the settings that point sift at it, serves `/v1/chat/completions` and
`/v1/models`, and stops cleanly on SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

EXAMPLE = """examples:
  sift llm serve                           # the default model on http://127.0.0.1:8090/v1
  sift llm serve --model ./my-model.gguf   # any GGUF file llama.cpp reads
  sift llm models                          # the packaged models and whether each is installed

then, in another shell, the three lines it prints and:
  sift ask --kb myproject "how are retries configured?"
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the llm command and its subcommands."""
    p = sub.add_parser("llm", help="run a local model server for sift's LLM path",
                       description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    llm_sub = p.add_subparsers(dest="llm_command", metavar="SUBCOMMAND", required=True)
    s = llm_sub.add_parser("serve", help="serve a packaged or given GGUF model over the OpenAI API",
                           description=__doc__, epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--model", default=None, metavar="NAME|PATH",
                   help="a packaged model's name (see `sift llm models`) or a .gguf file (default: smollm2-135m)")
    s.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8090, help="port (default 8090; 0: any free port)")
    s.add_argument("--ctx", type=int, default=2048,
                   help="context length in tokens (default 2048: prompts are cut to it, and a CPU reads about 70 "
                        "prompt tokens a second)")
    s.add_argument("--threads", type=int, default=1,
                   help="CPU threads (default 1: on a small shared machine more threads generate slower)")
    s.set_defaults(func=run_serve)
    m = llm_sub.add_parser("models", help="list the packaged models, their licences and install lines")
    m.set_defaults(func=run_models)


def run_serve(args: argparse.Namespace) -> int:
    """Start the server, print how to use it, and serve until SIGTERM or Ctrl-C."""
    from sift.cli import UsageError
    from sift.local_llm import ServerConfig, environment, start

    if not 0 <= args.port < 65536:
        raise UsageError("--port must be between 0 and 65535")
    if args.ctx < 512 or args.threads < 1:
        raise UsageError("--ctx must be at least 512 and --threads at least 1")
    config = ServerConfig(model=args.model, host=args.host, port=args.port, ctx=args.ctx, threads=args.threads)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server, base_url, name = start(config)
    try:
        out = sys.stdout
        out.write(f"serving {name} at {base_url} (context {config.ctx} tokens, {config.threads} thread(s)); "
                  "stop with Ctrl-C\n")
        out.write("point sift at it with:\n")
        for line in environment(base_url, name, config):
            out.write(f"  {line}\n")
        out.write('then: sift ask --kb KB "your question"\n')
        out.flush()
        while not stop.wait(3600):
            pass
    finally:
        del server  # joins llama.cpp's server threads
    sys.stderr.write("stopped\n")
    return 0


def run_models(args: argparse.Namespace) -> int:
    """One line per packaged model: name, licence, installed or the install line."""
    from sift.errors import ModelMissing
    from sift.local_llm import DEFAULT_MODEL, MODELS, model_file

    for name, m in MODELS.items():
        try:
            _, path = model_file(name)
            where = str(path)
        except ModelMissing:
            where = f"not installed: {m.install}"
        default = " (default)" if name == DEFAULT_MODEL else ""
        sys.stdout.write(f"{name}{default}\t{m.licence}\t{where}\n")
    return 0
