"""The PostgreSQL engine under the store: the same schema as SQLite's, migrations that replicas
may run at once, and the SQL translation (fuzzed). Runs on a real PostgreSQL started by the
tests (tests/postgres.py), on the SQLite run too."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omega.memory import SchemaTooNewError, Store
from omega.memory.migrations import bundled_migrations
from omega.memory.postgres import PgConnection, translate
from tests.postgres import PostgresServer

# What each engine has that the other does without: FTS5's table and shadow tables on SQLite,
# the folded tsvector column on PostgreSQL (both serve `search_messages`).
SQLITE_ONLY_TABLES = {
    "messages_fts",
    "messages_fts_config",
    "messages_fts_data",
    "messages_fts_docsize",
    "messages_fts_idx",
    "sqlite_sequence",
}
POSTGRES_ONLY_COLUMNS = {("messages", "search")}
POSTGRES_ONLY_INDEXES = {"idx_messages_search"}


def _sqlite_schema(db: Path) -> dict[str, object]:
    with sqlite3.connect(db) as conn:
        tables = sorted(
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if r[0] not in SQLITE_ONLY_TABLES
        )
        columns = {}
        for table in tables:
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            columns[table] = [(r[1], bool(r[3]) or bool(r[5]), r[5] > 0) for r in info]
        indexes = sorted(
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        )
        uniques = {}
        for table in tables:
            found = set()
            for index in conn.execute(f"PRAGMA index_list({table})").fetchall():
                if index[2] and index[3] == "u":  # a UNIQUE constraint of the table
                    cols = conn.execute(f"PRAGMA index_info({index[1]})").fetchall()
                    found.add(tuple(c[2] for c in cols))
            uniques[table] = sorted(found)
    return {"tables": tables, "columns": columns, "indexes": indexes, "uniques": uniques}


def _postgres_schema(url: str) -> dict[str, object]:
    conn = PgConnection(url)
    try:
        tables = sorted(
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        )
        columns = {}
        for table in tables:
            rows = conn.execute(
                "SELECT c.column_name, c.is_nullable, "
                "EXISTS (SELECT 1 FROM information_schema.key_column_usage k "
                "JOIN information_schema.table_constraints t "
                "ON t.constraint_name = k.constraint_name AND t.table_name = k.table_name "
                "WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_name = c.table_name "
                "AND k.column_name = c.column_name) "
                "FROM information_schema.columns c WHERE c.table_schema = 'public' "
                "AND c.table_name = ? ORDER BY c.ordinal_position",
                (table,),
            ).fetchall()
            columns[table] = [
                (r[0], r[1] == "NO", bool(r[2]))
                for r in rows
                if (table, r[0]) not in POSTGRES_ONLY_COLUMNS
            ]
        indexes = sorted(
            r[0]
            for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' "
                "AND indexname NOT IN (SELECT constraint_name FROM "
                "information_schema.table_constraints WHERE constraint_type IN "
                "('PRIMARY KEY', 'UNIQUE'))"
            )
            if r[0] not in POSTGRES_ONLY_INDEXES
        )
        uniques = {}
        for table in tables:
            rows = conn.execute(
                "SELECT tc.constraint_name, kcu.column_name FROM information_schema."
                "table_constraints tc JOIN information_schema.key_column_usage kcu "
                "ON tc.constraint_name = kcu.constraint_name AND tc.table_name = kcu.table_name "
                "WHERE tc.table_name = ? AND tc.constraint_type = 'UNIQUE' "
                "ORDER BY tc.constraint_name, kcu.ordinal_position",
                (table,),
            ).fetchall()
            grouped: dict[str, list[str]] = {}
            for name, column in rows:
                grouped.setdefault(name, []).append(column)
            uniques[table] = sorted(tuple(cols) for cols in grouped.values())
    finally:
        conn.close()
    return {"tables": tables, "columns": columns, "indexes": indexes, "uniques": uniques}


@pytest.mark.sqlite_only  # compares against a SQLite file of its own
def test_both_engines_yield_the_same_schema(
    tmp_path: Path, postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMEGA_STORE_URL", raising=False)
    Store(tmp_path / "memory.db").close()
    url = postgres_server.empty_database()
    Store(url).close()
    sqlite_schema = _sqlite_schema(tmp_path / "memory.db")
    postgres_schema = _postgres_schema(url)
    assert postgres_schema["tables"] == sqlite_schema["tables"]
    for table in sqlite_schema["tables"]:  # type: ignore[attr-defined]
        assert postgres_schema["columns"][table] == sqlite_schema["columns"][table], table  # type: ignore[index]
        assert postgres_schema["uniques"][table] == sqlite_schema["uniques"][table], table  # type: ignore[index]
    assert postgres_schema["indexes"] == sqlite_schema["indexes"]


def test_replicas_starting_together_migrate_once(postgres_server: PostgresServer) -> None:
    url = postgres_server.empty_database()
    errors: list[BaseException] = []
    stores: list[Store] = []

    def start() -> None:
        try:
            stores.append(Store(url))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = stores[0].query("SELECT version FROM schema_migrations ORDER BY version")
    assert [r[0] for r in rows] == [m.version for m in bundled_migrations("postgresql")]
    for store in stores:
        store.close()


def test_a_newer_schema_is_refused_on_postgresql(postgres_server: PostgresServer) -> None:
    url = postgres_server.new_database()
    store = Store(url)
    store.query("INSERT INTO schema_migrations VALUES (999, 'future', 'x') RETURNING version")
    store.close()
    with pytest.raises(SchemaTooNewError, match="schema version 999"):
        Store(url)


def test_recall_folds_diacritics_and_keeps_people_apart(postgres_server: PostgresServer) -> None:
    store = Store(postgres_server.new_database())
    store.store_exchange("telegram", "ana", "Mi café favorito está en Lisboa", "Anotado")
    store.store_exchange("telegram", "bob", "I love the cafe in Lisboa too", "Noted")
    store.close_active_conversation("telegram", "ana")
    found = store.search_messages("ana", "cafe lisboa")
    assert [m.content for m in found] == ["Mi café favorito está en Lisboa"]
    assert store.search_messages("ana", "50% off? it's 'quoted'") == []
    store.close()


def test_a_write_transaction_rolls_back_whole(postgres_server: PostgresServer) -> None:
    store = Store(postgres_server.new_database())
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute(
            "INSERT INTO facts (sender_id, key, value, created_at, updated_at) "
            "VALUES ('ana', 'city', 'Lisboa', 'x', 'x')"
        )
        raise RuntimeError("stop")
    assert store.facts("ana") == {}
    store.close()


@pytest.mark.no_store
def test_translation_of_the_portable_dialect() -> None:
    assert translate("SELECT * FROM t WHERE a = ? AND b LIKE 'x%?'") == (
        "SELECT * FROM t WHERE a = %s AND b LIKE 'x%%?'"
    )
    assert translate("INSERT OR IGNORE INTO t (a) VALUES (?)") == (
        "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING "
    )
    assert translate("SELECT group_concat(a, ', '), instr(b, ':') FROM t", False) == (
        "SELECT string_agg(a, ', '), strpos(b, ':') FROM t"
    )
    with pytest.raises(ValueError, match="not portable"):
        translate("INSERT OR REPLACE INTO t VALUES (?)")


_SQL_PIECES = st.lists(
    st.sampled_from(["?", "'", '"', "%", "a", " ", "''", "x?y", "group_concat", "--"]),
    max_size=30,
)


@pytest.mark.no_store
@given(_SQL_PIECES)
def test_placeholders_outside_literals_become_percent_s(pieces: list[str]) -> None:
    sql = "".join(pieces)
    out = translate(sql)
    # Outside quotes, each `?` is one `%s`; every `%` is doubled, so none stands alone.
    assert out.replace("%%", "").replace("%s", "").count("%") == 0
    quote = ""
    expected = 0
    for ch in sql:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "?":
            expected += 1
    assert out.replace("%%", "").count("%s") == expected


def test_a_lost_connection_is_opened_again_between_transactions(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.new_database()
    store = Store(url, exact=True)
    store.set_fact("ana", "city", "Lisboa")
    admin = PgConnection(postgres_server.url())
    name = url.rsplit("/", 1)[1]
    admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = ? AND pid != pg_backend_pid()",
        (name,),
    )
    admin.close()
    store.set_fact("ana", "food", "bacalhau")  # a server restart or a dropped link: reconnected
    assert store.facts("ana") == {"city": "Lisboa", "food": "bacalhau"}
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.facts("ana")  # closed by us: stays closed


@pytest.mark.no_store
def test_a_store_url_of_another_engine_is_refused_with_the_key_named(tmp_path: Path) -> None:
    from omega.config import ConfigError, load_config

    config = tmp_path / "config.toml"
    config.write_text('[store]\nurl = "mysql://root@localhost/omega"\n')
    with pytest.raises(ConfigError, match=r"store\.url"):
        load_config(config, environ={})
    config.write_text('[store]\nurl = "  "\n')
    assert load_config(config, environ={}).store.url == ""  # blank: memory.db
