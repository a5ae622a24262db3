"""sift: agentic RAG over a software project's code and docs, with checked citations."""

__version__ = "0.1.0"
