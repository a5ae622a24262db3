"""The on-disk search indexes of one generation, shared by the builder (``sift.ingest.index``) and the readers
(``sift.retrievers``): the BM25 matrix, the FAISS vector indexes and the generation's manifest.
"""
