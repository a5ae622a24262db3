"""The graph's nodes, one module each (async, returning partial state), with their routers (returning node names
or ``Send``s): ``planner``, ``retrieve`` (with ``route_retrieve``), ``fuse``, ``generate``, ``check`` (with
``route_check``), ``fallback``, ``summarize``; ``finish`` assembles the final answer. ``graph/build.py`` wires them;
the LLM agent's steps are in ``graph/agent.py``. Nodes report progress through ``runtime.stream_writer`` with the
events ``graph/progress.py`` builds.
"""
