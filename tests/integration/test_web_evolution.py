"""The owner's self-evolution pages over real HTTP against a running `omega start`: /fragments
shows each fragment's provenance and switches it off and on (a POST with the session's CSRF
token, audited as the owner's from the web; without the token nothing changes); /evolution
shows the same report as `omega evolution report`, cost of self-evolution included."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from omega.app import bootstrap
from omega.evolution.gaps import LimitationStore
from omega.evolution.proposals import ProposalStore, approve
from omega.memory.audit import AuditEntry
from omega.memory.store import Store
from tests.conftest import openai_env
from tests.dbfile import connect_db
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.web_support import RunningWeb, login, seed, serving

NOTE = "Summaries of PDFs stay under ten lines"


def seed_evolution(home: Path, approve_id: int) -> None:
    """A promoted fragment, a gap closed, a learning and audited background calls."""
    runtime = bootstrap(home)
    store = Store(runtime.paths.db)
    try:
        approve(
            store,
            runtime.paths,
            runtime.config,
            approve_id,
            NOTE,
            "owner (cli)",
            promote_notes=True,
        )
        limitations = LimitationStore(store)
        closed, _ = limitations.add("Cannot send faxes <script>alert(1)</script>", "no fax")
        limitations.resolve(str(closed.id), "a fax skill", by="owner (cli)")
        ProposalStore(store).add_learnings("openai", ["Check the file exists first"], "*")
        for event, tokens, cost in (("introspection", 1200, 0.25), ("summary", 300, 0.5)):
            store.audit(
                AuditEntry(
                    channel="omega",
                    sender_id="",
                    status="ok",
                    event=event,
                    provider="openai",
                    input_tokens=tokens,
                    output_tokens=100,
                    cost_usd=cost,
                )
            )
    finally:
        store.close()


@pytest.fixture
def web(fake_openai: FakeOpenAI, isolated_env: Path) -> Iterator[RunningWeb]:
    ids = seed(isolated_env)
    seed_evolution(isolated_env, int(str(ids["approve"])))
    with serving(isolated_env, openai_env(fake_openai)) as running:
        yield running


def active(home: Path) -> list[tuple[int, int]]:
    with closing(connect_db(home / "memory.db")) as conn:
        return conn.execute("SELECT id, active FROM prompt_fragments").fetchall()


def test_fragments_page_shows_provenance_and_switches_with_csrf(web: RunningWeb) -> None:
    client, csrf = login(web)
    own = {"Origin": web.base}
    with closing(client):
        page = client.get("/fragments").text
        row = page.split('data-fragment="1"')[1].split("</tr>")[0]
        assert NOTE in row and "active" in row
        assert '<a href="/proposals/1">proposal #1</a>' in row
        assert "promoted by owner (cli)" in row
        assert "introspection_evaluation, limitation_analysis" in row
        assert 'action="/fragments/1/deactivate"' in row

        refused = client.post("/fragments/1/deactivate", headers=own, data={"x": "1"})
        assert refused.status_code == 403
        assert active(web.home) == [(1, 1)]

        done = client.post("/fragments/1/deactivate", headers=own, data={"csrf_token": csrf})
        assert done.status_code == 303
        assert "Deactivated" in done.headers["location"]
        assert active(web.home) == [(1, 0)]
        page = client.get("/fragments?state=inactive").text
        row = page.split('data-fragment="1"')[1].split("</tr>")[0]
        assert "deactivated by owner (web)" in row
        assert 'action="/fragments/1/reactivate"' in row
        assert "data-fragment" not in client.get("/fragments?state=active").text

        again = client.post("/fragments/1/deactivate", headers=own, data={"csrf_token": csrf})
        assert "already%20inactive" in again.headers["location"]
        back = client.post("/fragments/1/reactivate", headers=own, data={"csrf_token": csrf})
        assert back.status_code == 303
        assert active(web.home) == [(1, 1)]
        unknown = client.post("/fragments/9/reactivate", headers=own, data={"csrf_token": csrf})
        assert "no%20prompt%20fragment%20%239" in unknown.headers["location"]
        huge = client.post(
            f"/fragments/{10**30}/deactivate", headers=own, data={"csrf_token": csrf}
        )
        assert huge.status_code == 404  # no row has an id past 18 digits: no such page
        assert active(web.home) == [(1, 1)]


def test_evolution_page_shows_the_report(web: RunningWeb) -> None:
    client, _ = login(web)
    with closing(client):
        page = client.get("/evolution").text
        assert client.get("/evolution?days=abc").status_code == 200
        # Digits str.isdigit() accepts and int() does not (a superscript) were a 500.
        assert client.get("/evolution?days=\u00b9").status_code == 200
        assert client.get("/limitations?page=\u00b2").status_code == 200
    learned = page.split('id="learned"')[1].split("</table>")[0]
    assert NOTE in learned and "Check the file exists first" in learned
    gaps = page.split('id="gaps"')[1].split("</table>")[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in gaps and "<script>" not in gaps
    assert "a fax skill" in gaps and "Cannot read PDF attachments" in gaps
    cost = page.split('id="cost"')[1].split("</table>")[0]
    assert re.search(r"<td>introspection</td><td>self_evolution</td><td>1</td>", cost)
    assert re.search(r"<td>summary</td><td>background</td><td>1</td>", cost)
    assert "0.2500" in cost and "0.5000" in cost
    gate = page.split('id="gate"')[1].split("</table>")[0]
    assert "skill pdf-reader" in gate and "touches the network" in gate
    assert "approved by owner (cli)" in gate
    assert "tool wire_money" in gate and "high risk" in gate
    critic = page.split('id="critic"')[1].split("</table>")[0]
    assert "read_file" in critic and "50%" in critic
    assert 'id="self-evolution-cost"><b>$0.2500</b>' in page
