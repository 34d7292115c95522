"""Scoring stored images: ``stage`` (the score stage), ``identity`` (FSS from embeddings),
``embedding`` (plumbing for embedder plugins), ``overediting`` (overedits from tracked states), image metrics
(``image_metric``: what a metric declares and sees; ``image_scoring``: measuring sessions beside the embedder;
``face_region``: the face-and-hair mask from a detector's landmarks) and the judge in ``judge/``.
"""
