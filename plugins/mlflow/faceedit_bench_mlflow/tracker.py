"""The MLflow tracker: one MLflow run per faceedit_bench run key, fed by the lifecycle hooks.

The engine creates ``MlflowTracker(**params)`` and registers the instance with the plugin
manager for the run, so the ``@hookimpl`` methods below receive ``faceedit_run_start``,
``faceedit_step_done``, ``faceedit_run_end`` and ``faceedit_run_error``.
``mlflow`` is imported inside the methods only: loading the plugin stays cheap.
"""

from __future__ import annotations

import os

# Before any mlflow import: `import mlflow` otherwise starts telemetry to an outside host.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")

import importlib.metadata  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import numbers  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any

from faceedit_bench.api import FaceEditBenchError, file_lock, fingerprint, hookimpl
from faceedit_bench_mlflow import _limits as lim  # noqa: E402
from faceedit_bench_mlflow.experiments import (  # noqa: E402,F401 - the error is public here too
    REMOTE,
    MlflowTrackerError,
    browse_hint,
    experiment_id,
    where,
)
from faceedit_bench_mlflow.logged import LOGGED_TAG, finished_with  # noqa: E402
from faceedit_bench_mlflow.opening import Opening  # noqa: E402
from faceedit_bench_mlflow.series import series_for_tracking  # noqa: E402
from faceedit_bench_mlflow.store import prepare_store, quiet_store_logs, sqlite_path, store_lock  # noqa: E402

if TYPE_CHECKING:
    from mlflow import MlflowClient

    from faceedit_bench.api import RunInfo, StepRecord

log = logging.getLogger(__name__)

RUN_KEY_TAG = "faceedit.run_key"
ERROR_TAG = "faceedit.error"
#: How each kind of report warning is introduced (as the console and report.html do).
WARNING_LABELS = {"missing": "MOSTLY MISSING (over 50%)", "judge_reliability": "JUDGE RELIABILITY"}
#: The report's mostly missing measurements, one per line ("none" when there are none); also metric ``warnings``.
WARNINGS_TAG = "faceedit.warnings"
STOPPED_TAG = "faceedit.stopped_by"  # the signal that stopped a KILLED run (SIGINT for Ctrl-C, SIGTERM ...)
TRUNCATED_TAG = "faceedit.params_truncated"
CHANGED_TAG_PREFIX = "faceedit.param_changed."
RUN_NAME_TAG = "mlflow.runName"
NOTE_TAG = "mlflow.note.content"  # shown as the run's description in the MLflow UI
#: Artifact names starting with this are contact sheets (skipped when log_contact_sheets is False).
CONTACT_SHEETS = "contact_sheet"


@dataclass
class _Active:
    """An opened MLflow run."""

    client: MlflowClient
    run_id: str
    experiment_id: str


class MlflowTracker:
    """Reports runs to MLflow (see ``conf/tracking/mlflow.yaml`` for the parameters)."""

    def __init__(
        self,
        tracking_uri: str | None = None,
        artifact_location: str | None = None,
        experiment_name: str | None = None,
        log_contact_sheets: bool = True,
        start_after_s: float = 10.0,
    ) -> None:
        # MLFLOW_TRACKING_URI is the only environment variable this tracker reads.
        self.tracking_uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or None
        self.artifact_location = artifact_location
        self.experiment_name = experiment_name
        self.log_contact_sheets = bool(log_contact_sheets)
        self._clients: dict[str, MlflowClient] = {}
        # Seconds after the run's start at which its MLflow run is opened if no step is done by then.
        self.start_after_s = float(start_after_s)
        self._opening: dict[str, Opening[_Active]] = {}
        self._outcomes: dict[str, Counter[str]] = {}
        self._lock = threading.Lock()
        self._last_uri: str | None = None

    def describe(self) -> dict[str, Any]:
        uri = self.tracking_uri or self._last_uri or "sqlite:///<workspace>/mlflow.db"
        return {"name": "mlflow", "tracking_uri": lim.redact_uri(uri), "mlflow_version": _mlflow_version()}

    # -- lifecycle hooks ------------------------------------------------------------------

    @hookimpl
    def faceedit_run_start(self, run: RunInfo) -> None:
        """Open the run's MLflow run on a thread once the work is under way (:mod:`.opening`): the
        first provider call does not wait for MLflow."""
        Path(run.workspace).mkdir(parents=True, exist_ok=True)  # the store's folder, made now or never (_uri_for)
        with self._lock:
            self._outcomes[run.run_key] = Counter()
            self._opening[run.run_key] = Opening(lambda: self._open(run), self.start_after_s)

    def opened(self, run: RunInfo) -> _Active:
        """The run's opened MLflow run, waiting for it; raises the error that kept it from opening."""
        return self._opening[run.run_key].result()

    def _open(self, run: RunInfo) -> _Active:
        """Find the MLflow run tagged with ``run.run_key`` (resume it) or create one, then
        log tags and params. Raises :class:`MlflowTrackerError` when the store cannot be used."""
        uri = self._uri_for(run)
        try:
            return self._open_in(uri, run)
        except FaceEditBenchError:
            raise
        except Exception as exc:
            raise MlflowTrackerError(
                f"MLflow tracking could not open the store {lim.redact_uri(uri)} ({lim.one_line(exc, 300)}). "
                "The finished steps are kept: fix the store (or choose another with tracking.params.tracking_uri=..., "
                "or run with tracking=none) and run the same command again to resume.") from exc

    def _open_in(self, uri: str, run: RunInfo) -> _Active:
        # Processes starting at once on one store take turns: MLflow's schema migration of a new
        # store fails when two run it together, two finds-or-creates would give one run key two
        # runs, and two first loggings of the same params would race.
        if _workspace_gone(uri, run.workspace):
            raise MlflowTrackerError(f"MLflow tracking did not open its store: the workspace {run.workspace} was "
                                     "deleted or moved, and the store is not made anew where it was.")
        with file_lock(store_lock(uri, run.workspace), what=f"opening the MLflow store {lim.redact_uri(uri)}"):
            prepare_store(uri)  # a new store is built beside its place: no kill leaves it half made
            client = self._client(uri)
            experiment = experiment_id(client, self.experiment_name or run.experiment_name,
                                       lambda: self._artifact_location_for(run, client.tracking_uri))
            found = self._find_run(client, experiment, run.run_key)
            title = run.title
            if found is None:
                created = client.create_run(experiment, run_name=title, tags={RUN_KEY_TAG: run.run_key})
                run_id, old_params = created.info.run_id, {}
            else:
                run_id, old_params = found.info.run_id, dict(found.data.params)
                client.update_run(run_id, status="RUNNING", name=title)
                for tag in (ERROR_TAG, STOPPED_TAG):  # what ended it last time is history now
                    if tag in found.data.tags:
                        client.delete_tag(run_id, tag)
            params, policy_tags = _params(run.params, old_params)
            _log_batches(client, run_id, tags=list({**_tags(run), **policy_tags}.items()), params=params)
            _log_inputs(client, run_id, run)
        # Every run, new or resumed, says where it is tracked: the id to open, the store to open it in.
        what, place = where(client.tracking_uri, experiment)
        _say(f"MLflow: {'resuming' if found else 'new'} run {run_id} ({title}) in experiment "
             f"{client.get_experiment(experiment).name!r}; {what}:", place)
        return _Active(client, run_id, experiment)

    @hookimpl
    def faceedit_step_done(self, run: RunInfo, step: StepRecord) -> None:
        """Count the outcome in memory; nothing goes to MLflow per step. The first new step done (its call has
        left; a step replayed from the ledger made none) opens the MLflow run; a store that could not be
        opened stops the run here."""
        opening = self._opening.get(run.run_key)
        if opening is None:
            return
        with self._lock:
            self._outcomes[run.run_key][str(step.outcome)] += 1
        if not step.resumed:
            opening.go()
        failure = opening.failure()
        if failure is not None:
            raise failure

    @hookimpl
    def faceedit_run_end(self, run: RunInfo, report: dict[str, Any], artifacts: dict[str, str],
                         metrics: dict[str, float], results_digest: str) -> None:
        """Log metrics (one timestamp, batched) and artifacts, then mark the run FINISHED.
        On a failure the run is marked FAILED (KILLED when a signal stopped it) and the error propagates."""
        with self._lock:
            opening = self._opening.pop(run.run_key, None)
            outcomes = self._outcomes.pop(run.run_key, Counter())
        if opening is None:
            log.warning("MLflow: run_end for run key %s that was never started; nothing logged", run.run_key)
            return
        uri = self._uri_for(run)
        digest = self._digest(uri, run, results_digest, outcomes, artifacts)
        if self._already_logged(uri, run, digest, opening, artifacts):
            return
        active = opening.result()  # a store that could not be opened fails the run here
        try:
            _log_batches(active.client, active.run_id, metrics=_metrics(metrics, outcomes), series=_series(report))
            cost = report.get("cost") or {}
            if cost.get("prices"):  # the price table the cost metrics were estimated with
                active.client.log_dict(active.run_id, cost["prices"], "cost/prices.json")
            # A run stopped by its budget is resumable, not finished work: say so where runs are listed.
            complete = report.get("run", {}).get("complete", True)
            active.client.set_tag(active.run_id, "faceedit.complete", str(complete).lower())
            sample = report.get("sample_size") or {}
            if "preliminary" in sample:  # too few identities: its figures are marked where runs are listed
                active.client.set_tag(active.run_id, "faceedit.preliminary", str(sample["preliminary"]).lower())
            _tag_warnings(active, run, report)
            self._log_artifacts(active, run, artifacts)
            active.client.set_tag(active.run_id, LOGGED_TAG, digest)
            active.client.set_terminated(active.run_id, status="FINISHED")
        except BaseException as error:
            _mark_ended(active, error)
            raise
        hint, shown = browse_hint(active.client.tracking_uri, active.experiment_id, active.run_id)
        _say(f"MLflow: run {active.run_id} FINISHED; {hint}{':' if shown else ''}", *shown)

    @hookimpl
    def faceedit_run_error(self, run: RunInfo, error: BaseException) -> None:
        """Mark the run FAILED with a ``faceedit.error`` tag, or KILLED with a ``faceedit.stopped_by``
        tag when a signal stopped it (Ctrl-C, SIGTERM): resumable work, not a failure. Never raises."""
        try:
            with self._lock:
                opening = self._opening.pop(run.run_key, None)
                self._outcomes.pop(run.run_key, None)
            if opening is None:  # never started, or run_end already marked it
                log.debug("MLflow: no active run for run key %s to mark as ended", run.run_key)
                return
            try:
                active = opening.result()  # the ended run is recorded as such, even if it ended before MLflow opened
            except Exception:  # noqa: BLE001 - it never opened (its error is what ended the run): nothing to mark
                return
            if _workspace_gone(self._uri_for(run), run.workspace):  # the moved store's run is resumed by a rerun
                return
            _mark_ended(active, error)
        except Exception:  # the hook contract: run_error must not raise
            log.warning("MLflow: could not mark run %s as ended", run.run_key, exc_info=True)

    # -- helpers -----------------------------------------------------------------------------

    def _digest(self, uri: str, run: RunInfo, results: str, outcomes: Counter[str],
                artifacts: Mapping[str, str]) -> str:
        """A digest of everything :meth:`faceedit_run_end` logs for this launch, its timings and calls aside."""
        logged = {
            "results": results, "outcomes": sorted(outcomes.items()), "tags": _tags(run),
            "params": _params(run.params, {})[0], "artifacts": sorted(artifacts.items()),
            "components": {kind: [c.name, c.provider, c.provider_version, c.description]
                           for kind, c in sorted(run.components.items())},
            "tracker": [lim.redact_uri(uri), self.experiment_name or run.experiment_name,
                        self.artifact_location, self.log_contact_sheets],
        }
        return fingerprint(logged)

    def _already_logged(self, uri: str, run: RunInfo, digest: str, opening: Opening[_Active],
                        artifacts: Mapping[str, str]) -> bool:
        """True when the store's run for this run key is FINISHED with ``digest`` (:mod:`.logged`) and the
        opening, not yet started, is called off: this launch has nothing new to log."""
        if opening.started():
            return False
        found = finished_with(uri, self.experiment_name or run.experiment_name, run.run_key, RUN_KEY_TAG, digest,
                              has_artifacts=bool(artifacts))
        if found is None or not opening.cancel():
            return False
        experiment, run_id = found
        hint, shown = browse_hint(uri, experiment, run_id)
        _say(f"MLflow: run {run_id} already holds these results (FINISHED); nothing new to log; "
             f"{hint}{':' if shown else ''}", *shown)
        return True

    def _uri_for(self, run: RunInfo) -> str:
        if self.tracking_uri:
            uri = self.tracking_uri
        else:
            # Made at the run's start; one that is gone now is not made anew (_workspace_gone).
            workspace = Path(run.workspace).resolve()
            uri = f"sqlite:///{(workspace / 'mlflow.db').as_posix()}"
        self._last_uri = uri
        return uri

    def _client(self, uri: str) -> MlflowClient:
        if uri not in self._clients:
            from mlflow import MlflowClient

            quiet_store_logs()
            self._clients[uri] = MlflowClient(tracking_uri=uri)
        return self._clients[uri]

    def _artifact_location_for(self, run: RunInfo, uri: str) -> str | None:
        location = self.artifact_location
        if location is None:
            if REMOTE.match(uri):
                return None  # the server decides (proxied mlflow-artifacts:/ or its default root)
            location = str(Path(run.workspace) / "mlartifacts")
        if re.match(r"^[A-Za-z][\w+.-]+:", location):  # already a URI (file:, s3:, mlflow-artifacts:)
            return location
        return Path(location).resolve().as_uri()

    @staticmethod
    def _find_run(client: MlflowClient, experiment_id: str, run_key: str) -> Any:
        quote = "'" if "'" not in run_key else '"'
        runs = client.search_runs(
            [experiment_id],
            filter_string=f"tags.`{RUN_KEY_TAG}` = {quote}{run_key}{quote}",
            max_results=10,
            order_by=["attributes.start_time ASC"],
        )
        if len(runs) > 1:
            log.warning("MLflow: %d runs carry run key %s; resuming the oldest", len(runs), run_key)
        return runs[0] if runs else None

    def _log_artifacts(self, active: _Active, run: RunInfo, artifacts: Mapping[str, str]) -> None:
        used_names: set[str] = set()
        for name, value in artifacts.items():
            if name.startswith(CONTACT_SHEETS) and not self.log_contact_sheets:
                continue
            path = Path(value) if Path(value).is_absolute() else Path(run.output_dir) / value
            if path.is_dir():
                active.client.log_artifacts(active.run_id, str(path), artifact_path=lim.param_key(name))
            elif path.is_file():
                folder = lim.param_key(name) if path.name in used_names else None  # never overwrite
                used_names.add(path.name)
                active.client.log_artifact(active.run_id, str(path), artifact_path=folder)
            else:
                log.warning("MLflow: artifact %r: %s does not exist; not logged", name, path)


def _tag_warnings(active: _Active, run: RunInfo, report: Mapping[str, Any]) -> None:
    """Say a mostly missing measurement, or an unreliable judge, where MLflow shows a run first: a tag, and the
    top of its description."""
    messages = [f"{WARNING_LABELS.get(str(w.get('kind')), WARNING_LABELS['missing'])}: {w['message']}"
                for w in report.get("warnings") or [] if isinstance(w, Mapping)]
    listed = lim.truncate("\n".join(messages) or "none", lim.MAX_TAG_VALUE)[0]
    active.client.set_tag(active.run_id, WARNINGS_TAG, listed)
    if messages:
        note = "\n".join(f"**{m}**  " for m in messages) + "\n\n" + run.note
        active.client.set_tag(active.run_id, NOTE_TAG, lim.truncate(note, lim.MAX_TAG_VALUE)[0])


def _say(message: str, *shown: str) -> None:
    """``message`` in lines of at most 100 columns, as the rest of the console; then what to copy (a link, a
    command), each line whole: a link broken over two lines opens nothing."""
    lines = textwrap.wrap(message, 100, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    print("\n".join([*lines, *(f"  {line}" for line in shown)]), flush=True)


def _tags(run: RunInfo) -> dict[str, str]:
    """The run's own tags, then the component tags, then the tags this tracker owns.

    Per component: ``<kind>`` (its registered name), ``<kind>.version`` (its own version from
    ``describe()``: model version, model-file hashes, test-set version), ``<kind>.provider`` and
    ``<kind>.provider_version`` (the plugin distribution that registered it).
    """
    tags: dict[str, str] = {str(k): str(v) for k, v in run.tags.items()}
    for kind, info in run.components.items():
        tags[kind] = info.name
        tags[f"{kind}.provider"] = info.provider
        tags[f"{kind}.provider_version"] = info.provider_version
        version = info.version
        if version is not None:
            tags[f"{kind}.version"] = version
    if "dataset" in run.components:
        tags["dataset.identity"] = run.components["dataset"].identity
    tags.update({RUN_KEY_TAG: run.run_key, RUN_NAME_TAG: run.title, NOTE_TAG: run.note})
    keys = lim.unique_keys(tags)
    return {keys[k]: lim.truncate(v, lim.MAX_TAG_VALUE)[0] for k, v in tags.items()}


def _params(
    params: Mapping[str, str], old: Mapping[str, str]
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The params still to log and the policy tags: truncated keys and changed values.

    A param already on a resumed run is not logged again; a changed value (MLflow refuses
    those) becomes the tag ``faceedit.param_changed.<key>`` holding the new value. Values of
    keys that name secrets (``*.api_key``, ``*.token``...) are logged as ``<redacted>``.
    """
    keys = lim.unique_keys(params)
    new: list[tuple[str, str]] = []
    truncated: list[str] = []
    tags: dict[str, str] = {}
    for original, raw in params.items():
        key = keys[original]
        raw = lim.REDACTED if lim.is_secret(original) else str(raw)
        value, cut = lim.truncate(raw, lim.MAX_PARAM_VALUE)
        if cut:
            truncated.append(key)
        if key not in old:
            new.append((key, value))
        elif old[key] != value:
            log.warning("MLflow: param %s changed on a resumed run; recorded as a tag", key)
            tags[lim.param_key(CHANGED_TAG_PREFIX + key)] = lim.truncate(raw, lim.MAX_TAG_VALUE)[0]
    if truncated:
        tags[TRUNCATED_TAG] = lim.truncate(",".join(truncated), lim.MAX_TAG_VALUE)[0]
    return new, tags


def _metrics(reported: Mapping[str, Any], outcomes: Counter[str]) -> list[tuple[str, float]]:
    """``steps_<outcome>`` counts (every known outcome, zeros included, so a resumed run
    shows no stale count) and the report's metrics, which win on a clash."""
    from faceedit_bench.api import Outcome

    values: dict[str, Any] = {f"steps_{o}": outcomes.get(o, 0) for o in [o.value for o in Outcome]}
    values.update({f"steps_{o}": n for o, n in outcomes.items()})
    values.update(reported)
    keys = lim.unique_keys(values, lim.metric_key)
    metrics: list[tuple[str, float]] = []
    for key, value in values.items():
        if isinstance(value, numbers.Real):  # bool, int, float and numpy scalars
            metrics.append((keys[key], float(value)))
        else:
            log.warning("MLflow: metric %s is not a number (%r); not logged", key, value)
    return metrics


def _series(report: dict[str, Any]) -> list[tuple[str, float, int]]:
    """The per-step trajectories as (key, value, step=k) points: ``fss`` over k = 0..4 is one
    metric whose history MLflow draws as a line, per test set (run) and per demographic group."""
    points: list[tuple[str, float, int]] = []
    series = series_for_tracking(report)
    keys = lim.unique_keys(series, lim.metric_key)
    for key, values in series.items():
        points.extend((keys[key], float(value), int(k)) for k, value in values)
    return points


def _log_batches(
    client: MlflowClient,
    run_id: str,
    *,
    metrics: Sequence[tuple[str, float]] = (),
    series: Sequence[tuple[str, float, int]] = (),
    params: Sequence[tuple[str, str]] = (),
    tags: Sequence[tuple[str, str]] = (),
) -> None:
    """Everything through ``log_batch`` in batches within MLflow's limits; every metric
    gets one timestamp and step 0, every point of a series its own step."""
    from mlflow.entities import Metric, Param, RunTag

    for batch in lim.batches(tags, lim.PARAMS_PER_BATCH):
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in batch], synchronous=True)
    for batch in lim.batches(params, lim.PARAMS_PER_BATCH):
        client.log_batch(run_id, params=[Param(k, v) for k, v in batch], synchronous=True)
    now = int(time.time() * 1000)
    points = [(k, (v, 0)) for k, v in metrics] + [(k, (v, step)) for k, v, step in series]
    for batch in lim.batches(points, lim.METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=[Metric(k, v, now, step) for k, (v, step) in batch], synchronous=True)


def _log_inputs(client: MlflowClient, run_id: str, run: RunInfo) -> None:
    """The dataset and the test set as MLflow dataset inputs: name, digest (the dataset's content
    identity, the test set's content hash), source, and the component's description as a one-row table."""
    import warnings

    import mlflow.data
    import pandas
    from mlflow.entities import DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    inputs = []
    for kind in ("dataset", "testset"):
        info = run.components.get(kind)
        if info is None:
            continue
        digest = str(info.description.get("content_hash") or info.identity) if kind == "testset" \
            else info.identity
        row = {"name": info.name, "provider": f"{info.provider}=={info.provider_version}",
               **{str(k): v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, default=str)
                  for k, v in info.description.items()}}
        # Quiet: "can be interpreted in multiple ways" (two local-file source types) and schema hints.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            dataset = mlflow.data.from_pandas(pandas.DataFrame([row]), source=_source(kind, info, run),
                                              name=info.name, digest=digest[:lim.MAX_DATASET_DIGEST])
            entity = dataset._to_mlflow_entity()
        inputs.append(DatasetInput(entity, tags=[InputTag(MLFLOW_DATASET_CONTEXT, kind)]))
    if inputs:
        client.log_inputs(run_id, datasets=inputs)


def _source(kind: str, info: Any, run: RunInfo) -> Any:
    """Where the data lives: its folder or file as a file URI, else the code that ships it."""
    from mlflow.data.code_dataset_source import CodeDatasetSource

    params = (run.config.get(kind) or {}).get("params") or {}
    location = info.description.get("root") or params.get("root") or params.get("path")
    if isinstance(location, str) and location:
        return Path(location).expanduser().resolve().as_uri()
    return CodeDatasetSource({"faceedit_bench.component": f"{kind}/{info.name}",
                              "provider": f"{info.provider}=={info.provider_version}"})


def _workspace_gone(uri: str, workspace: Path) -> bool:
    """Whether the store is a file inside a workspace that was deleted or moved: writing to it (its lock, its
    schema, a status) would make a new workspace where the old one was."""
    db = sqlite_path(uri)
    return db is not None and db.is_relative_to(workspace) and not Path(workspace).is_dir()


def _mark_ended(active: _Active, error: BaseException) -> None:
    """Tag why the run ended and set its status, each attempted even if the other fails; never
    raises. A run stopped by a signal (a ``KeyboardInterrupt``: Ctrl-C, or SIGTERM and SIGHUP, which
    the run turns into one carrying ``signum``) is KILLED; any other error is FAILED."""
    if isinstance(error, KeyboardInterrupt):
        status, tag = "KILLED", (STOPPED_TAG, signal.Signals(getattr(error, "signum", signal.SIGINT)).name)
    else:
        status, tag = "FAILED", (ERROR_TAG, lim.one_line(error))
    # One line each: the store usually fails for the reason that ended the run (a full disk), said already.
    try:
        active.client.set_tag(active.run_id, *tag)
    except Exception as exc:
        log.warning("MLflow: could not tag run %s with why it ended: %s", active.run_id, lim.one_line(exc))
    try:
        active.client.set_terminated(active.run_id, status=status)
    except Exception as exc:
        log.warning("MLflow: could not mark run %s %s: %s", active.run_id, status, lim.one_line(exc))


def _mlflow_version() -> str:
    for distribution in ("mlflow", "mlflow-skinny"):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"
