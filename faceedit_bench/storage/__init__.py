"""Keeping results.

* ``atomic`` (atomic writes), ``locks`` (inter-process locks), ``first_time`` (creation a kill never leaves half
  made), ``workspace`` (can it be written?), ``user_files`` (files a user gives, capped and checked).
* Images: ``store`` (content-addressed store), ``images`` (reading, validating, hashing), ``pixels`` (upright
  8-bit RGB), ``run_images`` (a run's images, read-only, for report sections).
* ``ledger`` (the run ledger; its tables in ``ledger_schema``), ``ledger_writer`` (its one writing thread), ``claims`` (leases on calls in
  flight), ``ledger_view`` (the ledger read only), ``judge_answers`` (the judge's kept answers, read only),
  ``shard_ledgers``, ``statistics_cache``
  (statistics kept by their inputs' hash), ``study_tables`` (human studies' answers).
* Folders: ``run_dirs`` (a run folder from what a user typed), ``replay_layout`` (edits made elsewhere).
"""
