"""The web app's security (issue 40, item 6), through Starlette's TestClient: every page needs the access token
(exchanged for an HttpOnly SameSite=Strict cookie, never left in a page), requests must name the bound host,
form posts need this session's CSRF token and the app's own origin, images are served by content hash from the
store only, and no secret reaches a page; ``serve`` refuses a reachable host without ``--allow-remote``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import APIRouter, Depends, Request
from starlette.testclient import TestClient

from faceedit_bench.serve.app import create_app
from faceedit_bench.serve.security import form_fields, require_csrf
from tests.serve_workspace import synthetic_run

TOKEN = "the-access-token-of-this-test"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("serve-security") / "ws"
    synthetic_run(ws, 0, 4, images=1)
    return ws


def client(ws: Path, token: str | None = TOKEN, **kwargs) -> TestClient:
    app = create_app(ws, token=token, allowed_hosts=["testserver"], **kwargs)
    echo = APIRouter()

    @echo.post("/echo", dependencies=[Depends(require_csrf)])
    async def posted(request: Request) -> dict:  # a form post as the study pages make them
        return {"fields": await form_fields(request)}

    app.include_router(echo)
    return TestClient(app)


def signed_in(ws: Path) -> TestClient:
    c = client(ws)
    assert c.get(f"/runs?token={TOKEN}").status_code == 200
    return c


def test_every_page_needs_the_token_which_becomes_an_http_only_cookie(workspace):
    c = client(workspace)
    image = next((workspace / "store").glob("*/*")).name
    for path in ("/runs", f"/runs/{next((workspace / 'runs').iterdir()).name}", f"/images/{image}", "/compare"):
        assert c.get(path).status_code == 401, path
    assert c.get("/runs?token=wrong").status_code == 403
    exchange = c.get(f"/runs?token={TOKEN}&q=editor", follow_redirects=False)
    assert exchange.status_code == 303
    assert exchange.headers["location"] == "/runs?q=editor"  # the token leaves the address bar
    cookie = exchange.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    page = c.get("/runs")
    assert page.status_code == 200 and "editor0" in page.text and TOKEN not in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    assert client(workspace).get("/runs").status_code == 401  # another browser, without the cookie


def test_a_request_for_another_host_name_is_refused(workspace):
    c = signed_in(workspace)
    assert c.get("/runs", headers={"host": "attacker.example"}).status_code == 400  # DNS rebinding


def test_form_posts_need_this_sessions_csrf_token_and_the_apps_origin(workspace):
    c = signed_in(workspace)
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', c.get("/runs").text).group(1)
    form = {"content-type": "application/x-www-form-urlencoded"}
    assert c.post("/echo", content="vote=a", headers=form).status_code == 403  # no token
    assert c.post("/echo", content="vote=a&csrf_token=" + "0" * 64, headers=form).status_code == 403
    assert c.post("/echo", content=f"vote=a&csrf_token={csrf}",
                  headers={**form, "origin": "http://attacker.example"}).status_code == 403
    other = signed_in(workspace)  # another session's token is not this one's
    assert other.post("/echo", content=f"vote=a&csrf_token={csrf}", headers=form).status_code == 403
    ok = c.post("/echo", content=f"vote=a&csrf_token={csrf}", headers={**form, "origin": "http://testserver"})
    assert ok.status_code == 200 and ok.json()["fields"]["vote"] == ["a"]
    assert c.post("/echo", content="vote=b", headers={"x-csrf-token": csrf}).status_code == 200


def test_images_come_by_content_hash_from_the_store_only(workspace):
    c = signed_in(workspace)
    stored = next((workspace / "store").glob("*/*")).name
    full = c.get(f"/images/{stored}")
    assert full.status_code == 200 and full.content == (workspace / "store" / stored[:2] / stored).read_bytes()
    thumb = c.get(f"/images/{stored}?size=thumb")
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/jpeg"
    run = next((workspace / "runs").iterdir()).name
    for path in ("/images/..%2F..%2Fledger.sqlite", "/images/../ledger.sqlite", f"/images/{stored.upper()}",
                 f"/images/{stored[:-1]}", "/images/" + "0" * 64, f"/images/{stored}%2F..%2F..%2Fledger.sqlite",
                 "/runs/..%2F..%2Fetc", f"/runs/{run}/contact_sheets/..%2Freport.json",
                 f"/runs/{run}/contact_sheets/%2e%2e.png"):
        response = c.get(path)
        assert response.status_code == 404, path
        assert b"SQLite" not in response.content and b'"schema"' not in response.content, path


def test_no_secret_reaches_a_page(workspace, monkeypatch):
    secret = "editor0@pose/synthetic/pixel"  # a provider key that happens to read like the run's name
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", secret)
    page = signed_in(workspace).get("/runs").text
    assert secret not in page and "***" in page


def test_serve_refuses_a_reachable_host_without_the_flag_and_a_folder_that_is_no_workspace(tmp_path, capsys):
    from faceedit_bench.cli import main

    assert main(["serve", str(tmp_path), "--host", "127.0.0.1"]) == 2
    assert "not a workspace" in capsys.readouterr().err
    (tmp_path / "runs").mkdir()
    assert main(["serve", str(tmp_path), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote" in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_the_serve_command_prints_its_address_and_serves_it_with_the_token(workspace):
    import http.cookiejar
    import signal
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "faceedit_bench.cli", "serve", str(workspace)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [server.stdout.readline() for _ in range(2)]
        url = re.search(r"open (http://127\.0\.0\.1:\d+/runs\?token=[\w-]+)$", lines[1].strip()).group(1)
        base = url.split("/runs")[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/runs", timeout=30)
        assert refused.value.code == 401
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(url, timeout=30) as page:
            assert page.status == 200 and page.url == f"{base}/runs" and b"editor0" in page.read()
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
