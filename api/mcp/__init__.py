"""sift over the Model Context Protocol: ``tools.build_server`` (tools, resources, prompt), ``state`` (what the
tools run on, opened on first use) and ``http`` (streamable HTTP behind the API keys)."""
