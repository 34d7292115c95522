"""Human studies over finished runs (docs/studies.md): items from the runs' kept edits
(:mod:`~faceedit_bench.studies.items`; the checklist and categorical kinds' in
:mod:`~faceedit_bench.studies.checklist` and :mod:`~faceedit_bench.studies.categorical`), the questions people
answer (:mod:`~faceedit_bench.studies.questions`), who answers what (:mod:`~faceedit_bench.studies.assign`),
creating a study (:mod:`~faceedit_bench.studies.create`), live agreement (:mod:`~faceedit_bench.studies.results`,
as console lines in ``text``) and exports in the layouts the analysis commands read
(:mod:`~faceedit_bench.studies.export`). The answers live in the workspace ledger
(:mod:`faceedit_bench.storage.study_tables`); the pages are in ``faceedit_bench/serve/study_routes.py``."""
