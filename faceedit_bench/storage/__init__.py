"""Keeping results.

* ``atomic`` (atomic writes), ``locks`` (inter-process locks), ``first_time`` (creation a kill never leaves half
  made), ``workspace`` (can it be written?), ``text`` (text files a user gives).
* Images: ``store`` (content-addressed store), ``images`` (reading, validating, hashing), ``pixels`` (upright
  8-bit RGB), ``run_images`` (a run's images, read-only, for report sections).
* ``ledger`` (the run ledger), ``ledger_view`` (the ledger read only), ``shard_ledgers``, ``statistics_cache``
  (statistics kept by their inputs' hash).
* Folders: ``run_dirs`` (a run folder from what a user typed), ``replay_layout`` (edits made elsewhere).
"""
