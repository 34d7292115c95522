"""``python -m tests.bench_with_test_plugin <overrides>``: the command ``python -m faceedit_bench`` in a process of
its own with the test plugin added to the installed ones (its pixel embedder and synthetic faces), for tests whose
subject is the process (e.g. several at once on one workspace) but not dlib. Needs the checkout on PYTHONPATH."""

from faceedit_bench.collector import collect_less_often

collect_less_often()  # as in a command's process

from faceedit_bench.plugin import manager  # noqa: E402
from faceedit_bench.run import hydra_app  # noqa: E402


def _with_test_plugin() -> manager.Plugins:
    from tests import fake_plugin

    plugins = manager.load_plugins()
    plugins.add(fake_plugin, name="fake", distribution="faceedit-bench-tests")
    return plugins


if __name__ == "__main__":
    manager.get_plugins = _with_test_plugin
    hydra_app.main()
