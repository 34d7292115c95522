"""Running an experiment.

* Entry: ``hydra_app`` (the Hydra app), ``multirun`` (Hydra's side of a run), ``preflight`` (checks before
  anything is created), ``composition`` (each config composed once per command), ``group_options`` (each
  config group's options), ``required`` (mandatory settings left unset), ``setting_keys`` (every key must be
  known), ``section_settings`` (report sections' settings in the schema), ``data_needs`` (can the metrics
  score the faces?), ``plan`` (calls, cached, cost and time before paying), ``access`` (each editor's and
  judge's key and price, for ``ls``).
* Assembly: ``experiment`` (config to components to artifacts), ``components``, ``judges`` (the judge or
  panel, and the judge metrics ``metrics=[...]`` selects), ``image_metrics`` (the image metrics a run selects),
  ``call_roles``, ``cost_section`` (what a launch did and cost, for the report's launch sections).
* Conditions and samples: ``condition_prompts`` (the prompt under each condition), ``condition_plan`` (running
  each session once per condition), ``sampling`` (stratified or published samples).
* The run: ``engine`` (the loop), ``flow`` (its bounded flow), ``admission`` and ``edit_stage`` (stages),
  ``inputs`` (further input images), ``progress``, ``signals`` (SIGTERM stops as Ctrl-C does).
* Around runs: ``shards`` and ``merge`` (sharded runs), ``data_check`` (a dataset's folder, before any run).
"""
