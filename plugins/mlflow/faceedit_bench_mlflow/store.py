"""A local MLflow SQLite store that no kill leaves half made.

MLflow makes a new SQLite store by migrating it in place through about a hundred schema revisions,
each committed on its own (SQLite commits schema statements one by one): 1 to 6 s of work on a
fresh workspace. A process killed meanwhile used to leave a store that every later run refused
("table span_metrics already exists", "out-of-date database schema"). Here a new store is built in a
temporary file beside its place and moved there once it is at the schema's head, so a store is
either complete or absent; a store that an earlier version left half made, and that therefore holds
nothing, is rebuilt the same way. Everything here runs under the store's lock (:func:`store_lock`):
two processes opening a new store at once would otherwise both migrate it.

The migrations are run once per user and MLflow version, not once per workspace: the first new store
is built in a template file under :data:`TEMPLATES` (named by MLflow's version and schema head; under
its own lock, beside its place, moved in complete), and every new store is a copy of it, made the same
way (about 1.8 s of CPU saved on each new workspace). An empty store holds nothing of its workspace
(its default experiment is made when MLflow first opens it), so a copy is a store as a build makes it
(MLflow's own builds differ only in the order of a table's clauses).
Any problem with the template (an unwritable cache, a damaged file) falls back to building in place.
"""

from __future__ import annotations

import functools
import logging
import shutil
import sqlite3
from enum import Enum
from pathlib import Path
from typing import Any

from faceedit_bench.api import built_beside, file_lock

log = logging.getLogger(__name__)

SQLITE = "sqlite:///"
#: Rows a new store holds before anything is logged to it (MLflow 3.17): the schema version, the
#: default workspace and the Default experiment (id 0). Any other row means the store is in use.
_PRISTINE = {"alembic_version", "workspaces", "experiments"}
#: The folder of the per-user templates of an empty store (:func:`_template`).
TEMPLATES = Path("~/.cache/faceedit_bench/mlflow-stores")


class StoreState(Enum):
    MISSING = "missing"  # no file, or an empty one: build it
    READY = "ready"  # holds nothing yet, at the schema's head: open it
    HALF_MADE = "half-made"  # holds nothing, below the head: a creation that was cut short; build it again
    IN_USE = "in use"  # holds runs or other records, or is not a store we can read: MLflow decides


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` tracking URI, else None."""
    if not uri.startswith(SQLITE):
        return None
    return Path(uri.removeprefix(SQLITE).split("?", 1)[0])


def store_lock(uri: str, workspace: Path) -> Path:
    """The lock file of an MLflow store (for ``file_lock``): beside a SQLite file, whichever workspaces use it,
    else in the run's workspace (a server migrates its own store)."""
    db = sqlite_path(uri)
    folder, name = (db.parent, db.name) if db is not None else (Path(workspace), "mlflow")
    return folder / ".locks" / f"{name}.lock"


def prepare_store(uri: str) -> StoreState:
    """Make the SQLite file of ``uri`` a complete MLflow store if it is missing or half made
    (call under :func:`store_lock`); other URIs are left alone. Returns the state found."""
    db = sqlite_path(uri)
    if db is None:
        return StoreState.IN_USE
    state = store_state(db)
    if state is StoreState.HALF_MADE:
        log.warning("MLflow: %s was left half created by an interrupted run and holds nothing; building it again", db)
    if state in (StoreState.MISSING, StoreState.HALF_MADE):
        with built_beside(db) as tmp:
            if not _copied_template(tmp):
                _build(tmp)
    return state


def store_state(db: Path) -> StoreState:
    """What the file ``db`` holds, read without changing it (MLflow would start migrating it)."""
    try:
        if db.stat().st_size == 0:
            return StoreState.MISSING
    except FileNotFoundError:
        return StoreState.MISSING
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=60)
    except sqlite3.Error:
        return StoreState.IN_USE
    try:
        tables = {name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        if _holds_records(con, tables):  # the usual case, and cheap to know: MLflow opens it as it is
            return StoreState.IN_USE
        version = con.execute("SELECT version_num FROM alembic_version").fetchone() \
            if "alembic_version" in tables else None
        return StoreState.READY if version is not None and version[0] == _head_revision() else StoreState.HALF_MADE
    except sqlite3.DatabaseError:  # not a database, or a damaged one: not ours to replace
        return StoreState.IN_USE
    finally:
        con.close()


def _holds_records(con: sqlite3.Connection, tables: set[str]) -> bool:
    if "experiments" in tables and con.execute("SELECT 1 FROM experiments WHERE experiment_id != 0").fetchone():
        return True
    return any(con.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() for t in sorted(tables - _PRISTINE))


@functools.cache  # MLflow reads its two hundred migration scripts to tell: once per process is enough
def _head_revision() -> str:
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())


def _copied_template(path: Path) -> bool:
    """Copy the template of an empty store into the (temporary, empty) file ``path``; False, with
    ``path`` left empty, when there is no usable template."""
    try:
        shutil.copyfile(_template(), path)
        return True
    except Exception as exc:  # noqa: BLE001 - the template only saves time: build the store instead
        log.debug("MLflow: no store template (%s); building the store", exc)
        path.write_bytes(b"")
        return False


def _template() -> Path:
    """The template of an empty store at the schema's head of the installed MLflow, built if missing
    or unusable."""
    from mlflow.version import VERSION

    folder = TEMPLATES.expanduser()
    template = folder / f"mlflow-{VERSION}-{_head_revision()}.db"
    if store_state(template) is not StoreState.READY:
        with file_lock(folder / ".locks" / f"{template.name}.lock", what="building the MLflow store template"):
            if store_state(template) is not StoreState.READY:  # nobody built it while we waited
                with built_beside(template) as tmp:
                    _build(tmp)
    return template


def _build(path: Path) -> None:
    """Create MLflow's schema at its head in the (temporary, empty) SQLite file ``path``."""
    import sqlalchemy
    from mlflow.store.db.utils import _initialize_tables, _verify_schema
    from sqlalchemy.pool import NullPool

    quiet_store_logs()
    engine = sqlalchemy.create_engine(f"{SQLITE}{path.as_posix()}", poolclass=NullPool)
    # The file is temporary until it is complete: no sync per migration (built_beside syncs it
    # once before moving it into place); halves the time of building it.
    sqlalchemy.event.listen(engine, "connect", _unsynced)
    try:
        _initialize_tables(engine)
        _verify_schema(engine)
    finally:
        engine.dispose()


def _unsynced(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous = OFF")
    cursor.execute("PRAGMA journal_mode = MEMORY")
    cursor.close()


def quiet_store_logs() -> None:
    """Store creation and migrations log at INFO through MLflow's own handler, which would cut
    through the progress bar; warnings and errors still show."""
    for name in ("mlflow.store", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # MLflow logs each SQL error with its traceback before raising it; the tracker says what failed in one line.
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
