"""The study pages through the app (TestClient): an annotator's link opens their own list only (items, images,
answers), a post without the page's CSRF token is refused, organiser pages need the access token, and a stored
study holds nothing that identifies a person (no address, browser, name or link secret)."""

from __future__ import annotations

import hashlib
import io
import re

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from faceedit_bench.serve.app import create_app
from faceedit_bench.storage.study_tables import StudyTables
from faceedit_bench.studies.assign import assign
from faceedit_bench.studies.create import new_annotators
from faceedit_bench.studies.questions import PAIRWISE

TOKEN = "study-pages-token-0123456789"
USER_AGENT = "Mozilla/5.0 (annotator-browser-fingerprint)"


def _png(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (shade, 0, 0)).save(out, "PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two annotators with disjoint lists (one each per item) over 6 pairs whose images are in the store."""
    ws = tmp_path_factory.mktemp("ws")
    (ws / "runs").mkdir()
    hashes = []
    for shade in range(13):
        data = _png(shade * 10)
        digest = hashlib.sha256(data).hexdigest()
        (ws / "store" / digest[:2]).mkdir(parents=True, exist_ok=True)
        (ws / "store" / digest[:2] / digest).write_bytes(data)
        hashes.append(digest)
    items = [{"item_id": f"i{n}", "editors": ["ed_a", "ed_b"], "face_id": f"f{n}", "identity": f"p{n}",
              "session_id": "s", "condition": "baseline", "k": 1, "steps": 1, "instructions": ["add a hat"],
              "groups": {"gender": "female"}, "judge": {}, "questions": [PAIRWISE.as_dict()],
              "images": {"source": hashes[0], "A": hashes[1 + 2 * n], "B": hashes[2 + 2 * n]}} for n in range(6)]
    rows, links = new_annotators(2)
    tasks = assign([i["item_id"] for i in items], {}, [a for a, _ in rows], 1, seed=0)
    StudyTables(ws).create("s-pages", "pairwise", {"title": "pages", "seed": 0, "editors": ["ed_a", "ed_b"]},
                           items, {}, rows, tasks)
    client = TestClient(create_app(ws, token=TOKEN, allowed_hosts=["testserver"]),
                        headers={"User-Agent": USER_AGENT})
    return ws, client, links, tasks


def _form(html: str) -> dict[str, str]:
    return {name: re.search(rf'name="{name}" value="([^"]+)"', html).group(1) for name in ("csrf_token", "item_id")}


def test_an_annotator_sees_and_answers_only_their_own_items(study):
    ws, client, links, tasks = study
    (a, secret_a), (b, secret_b) = links.items()
    mine = {t.item_id for t in tasks[a]}
    theirs = {t.item_id for t in tasks[b]}
    assert mine and theirs and not mine & theirs
    page = client.get(f"/annotate/s-pages/{secret_a}")
    assert page.status_code == 200 and _form(page.text)["item_id"] in mine and b not in page.text
    # B's item posted with A's link and a valid CSRF token: refused, nothing stored
    fields = {**_form(page.text), "item_id": sorted(theirs)[0], "vote": "A"}
    assert client.post(f"/annotate/s-pages/{secret_a}", data=fields).status_code == 404
    # an image of B's items through A's link: refused; A's own: served
    items = StudyTables(ws).items("s-pages")
    their_image = items[sorted(theirs)[0]]["images"]["A"]
    assert client.get(f"/annotate/s-pages/{secret_a}/image/{their_image}").status_code == 404
    for src in re.findall(r'img src="([^"]+)"', page.text):
        assert client.get(src).status_code == 200
    # the store is not open to an annotator without the app's token
    assert client.get(f"/images/{their_image}").status_code == 401
    # A answers; B's page shows nothing of it, and B's progress is B's own
    answer = client.post(f"/annotate/s-pages/{secret_a}", data={**_form(page.text), "vote": "both_bad"},
                         follow_redirects=False)
    assert answer.status_code == 303
    other = client.get(f"/annotate/s-pages/{secret_b}").text
    assert "both_bad" not in other.split("<form")[0] and "0 of 3 answered" in other
    assert [x.answer for x in StudyTables(ws).answers("s-pages")] == [{"vote": "both_bad"}]
    assert client.get("/annotate/s-pages/not-a-link").status_code == 404


def test_a_post_without_the_pages_csrf_token_or_from_another_site_is_refused(study):
    ws, client, links, _ = study
    secret = list(links.values())[1]
    fields = _form(client.get(f"/annotate/s-pages/{secret}").text)
    before = len(StudyTables(ws).answers("s-pages"))
    assert client.post(f"/annotate/s-pages/{secret}", data={"item_id": fields["item_id"], "vote": "A"}
                       ).status_code == 403
    assert client.post(f"/annotate/s-pages/{secret}", data={**fields, "vote": "A"},
                       headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.post("/studies", data={"kind": "pairwise"}).status_code in (401, 403)
    assert len(StudyTables(ws).answers("s-pages")) == before


def test_organiser_pages_need_the_token_and_show_agreement(study):
    _, client, _, _ = study
    fresh = TestClient(client.app)
    assert fresh.get("/studies/s-pages").status_code == 401
    assert client.get(f"/studies?token={TOKEN}").status_code == 200
    page = client.get("/studies/s-pages")
    assert page.status_code == 200 and 'id="agreement"' in page.text and TOKEN not in page.text


def test_a_stored_study_holds_nothing_that_identifies_a_person(study):
    ws, client, links, _ = study
    for secret in links.values():  # every annotator answers what is left of their list
        while 'name="item_id"' in (page := client.get(f"/annotate/s-pages/{secret}").text):
            client.post(f"/annotate/s-pages/{secret}", data={**_form(page), "vote": "B"})
    raw = b"".join(p.read_bytes() for p in ws.glob("ledger.sqlite*"))
    assert len(StudyTables(ws).answers("s-pages")) == 6
    for identifying in ("testclient", "127.0.0.1", USER_AGENT, "annotator-browser", *links.values()):
        assert identifying.encode() not in raw, identifying
