"""``faceedit-bench serve``: a local web app to browse a workspace's runs down to every step's images and the
judge's reasoning.

* ``app`` (:func:`~faceedit_bench.serve.app.create_app`), ``security`` (access token, host check, CSRF),
  ``pages`` (rendering, secrets masked), ``assets`` (stylesheets, images by content hash).
* Pages: ``runs_page`` (the runs table and compare), ``run_page`` (a run's report and its sessions),
  ``session_page`` (every step of one session).
* Reading: ``runs_index`` (every run's summary row; also ``faceedit-bench runs``), ``run_data`` (a run's
  sessions and steps), ``judgments`` (the judge's raw answers in the ledger).
* ``server`` (uvicorn on a free loopback port, the printed address).
"""
