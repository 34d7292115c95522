"""Reporting a run.

* The run report: ``run_report`` (report.json), ``report_schema``, ``measures`` (how to read and name each
  quantity), ``read_first`` (what a reader must be told first), ``fidelity`` (where presets follow their
  papers), ``comparability``, ``versions`` (components named as people read them).
* Its sections: ``calls_view``, ``conditions_view``, ``overediting_section``; ``launch_sections`` (the core's
  cost, calls, performance, prompts and judge reliability, as report sections); ``part_views`` (typed views of
  report parts, derived from their schemas).
* Files: ``artifacts`` (the run's files), ``tables`` (steps and sessions tables), ``results`` (many runs as one
  table) and ``results_plot``, ``replay_export`` (a run's images in the replay layout).
* report.html: ``html``, ``html_file``, ``html_sections``, ``html_images``, ``html_plots``, ``headline``,
  ``contact_sheet``, ``html_sheet_redraw``, ``plots``, ``forest_svg``; its templates in ``templates/``.
* The console: ``console`` (tables that fit the terminal), ``fit`` (text at the console width), ``summary`` and
  ``summary_tables``.
* Reading finished runs: ``compared_runs``, ``paired_differences``, ``metric_ranks``, ``sources`` (MLflow),
  ``finished_run`` (a finished run as a plugin reads it: report, tables, config, tracker).
* ``attached`` (sections attached after the run), ``preliminary`` (the small-sample mark).
"""
