"""Builtin plugins, registered through the same hooks as external ones: ``editors``, ``metrics``
(identity metrics), ``judge_metrics`` (with their report sections), ``image_metrics`` (background and edit
magnitude, computed in ``pixel_metrics``), ``testsets``, ``trackers`` (``none``), ``report_parts`` (the core's
own report parts as sections) and
the dataset loaders in ``datasets/``; published results recomputed in ``reproductions/``.
"""
