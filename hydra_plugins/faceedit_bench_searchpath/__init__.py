"""Hydra search-path plugin: adds the config directories that faceedit_bench plugins
publish through the ``faceedit_config_searchpath`` hook, so installing a plugin is
enough for its config entries (e.g. ``editor=<name>``) to compose.

Hydra loads every search-path plugin for every Hydra app in the environment; this one
acts only when the app composes faceedit_bench's own config directory."""

from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
from hydra.plugins.search_path_plugin import SearchPathPlugin


class FaceEditBenchSearchPathPlugin(SearchPathPlugin):
    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from faceedit_bench.plugin.manager import current_plugins
        from faceedit_bench.run.hydra_app import conf_dir

        ours = str(conf_dir().resolve())
        paths = {element.path.removeprefix("file://") for element in search_path.get_path()}
        if ours not in paths:
            return
        for path in current_plugins().searchpath():
            # After the main conf dir (the project's own entries win a name clash) and
            # before the structured-config store (a plugin's YAML wins over the fallback
            # entry generated for every registered name).
            search_path.append("faceedit_bench-plugin", path, anchor=SearchPathQuery(provider="main"))
