"""Reporting a run: the run report, its files, HTML pages, contact sheets, console summary."""
