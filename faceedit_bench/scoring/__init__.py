"""Scoring stored images: ``stage`` (the score stage), ``identity`` (FSS from embeddings),
``embedding`` (plumbing for embedder plugins), ``overediting`` (overedits from tracked states) and the judge in
``judge/``.
"""
