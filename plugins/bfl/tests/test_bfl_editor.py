"""The BFL editors against the fake BFL API, through the plugin's real HTTP client: the wire
fields (pinned from BFL's API reference), every fault's outcome, one submission per attempt,
polls counted apart, and the key kept to the API host."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Callable
from typing import Any

import pytest
from bfl_helpers import KEY_ENV, SHORT_REQUEST_TIMEOUT_S
from faceedit_bench_bfl.editor import BflEditor, Flux2FlexEditor, Flux2ProEditor, KontextMaxEditor, KontextProEditor
from faceedit_bench_bfl.models import MODELS, REGIONS
from PIL import Image

from faceedit_bench.api import AsyncEditor, ConfigError, EditRequest, EditResult, Outcome, RetryableError
from faceedit_bench.api.testing import EditorContract, gradient_image
from faceedit_bench.testing import Executor, MissingSecretError, cost_usd
from tests.fakes.answers import fake_edit
from tests.fakes.bfl import DEFAULT_KEY, FLEX_FIELDS, FLUX2_FIELDS, KONTEXT_FIELDS, BFLFakeServer, bfl_server

MakeEditor = Callable[..., BflEditor]


def request(image: bytes | None = None, instruction: str = "make the hair red", seed: int = 11) -> EditRequest:
    return EditRequest(image or gradient_image(3), instruction, "face-1", "hair-01", 1, seed)


def edit(editor: BflEditor, req: EditRequest | None = None) -> EditResult:
    return asyncio.run(editor.aedit(req or request()))


def through_executor(editor: BflEditor, req: EditRequest | None = None) -> tuple[EditResult, Executor]:
    executor = Executor(editor.limits)
    result = asyncio.run(executor.call(lambda: editor.aedit(req or request())))
    return result, executor


class TestKontextProContract(EditorContract):
    @pytest.fixture
    def editor(self, make_editor: MakeEditor) -> BflEditor:
        return make_editor()


# -- the wire protocol ---------------------------------------------------------------------


def test_the_request_schemas_are_bfl_s() -> None:
    """The fields of BFL's OpenAPI request schemas, as the fake enforces them (unknown -> 422)."""
    images = ["input_image", *(f"input_image_{i}" for i in range(2, 9))]
    assert KONTEXT_FIELDS == {"prompt", *images[:4], "seed", "aspect_ratio", "output_format", "webhook_url",
                              "webhook_secret", "prompt_upsampling", "safety_tolerance"}
    assert FLUX2_FIELDS == {"prompt", "disable_pup", *images, "seed", "width", "height", "safety_tolerance",
                            "output_format", "webhook_url", "webhook_secret"}
    assert FLEX_FIELDS == {"prompt", "prompt_upsampling", *images, "input_image_blob_path", "seed", "width", "height",
                           "guidance", "steps", "safety_tolerance", "output_format", "webhook_url", "webhook_secret"}
    assert {m: (s.schema, s.safety_max) for m, s in MODELS.items()} == {
        "flux-kontext-pro": ("FluxKontextProInputs", 6), "flux-kontext-max": ("FluxKontextProInputs", 6),
        "flux-2-pro": ("Flux2Inputs", 5), "flux-2-pro-preview": ("Flux2Inputs", 5),
        "flux-2-flex": ("Flux2FlexInputs", 5)}
    assert dict(REGIONS) == {"global": "https://api.bfl.ai", "eu": "https://api.eu.bfl.ai",
                             "us": "https://api.us.bfl.ai"}


@pytest.mark.parametrize(("cls", "path", "fields"), [
    (KontextProEditor, "/v1/flux-kontext-pro", {"prompt_upsampling": False}),
    (KontextMaxEditor, "/v1/flux-kontext-max", {"prompt_upsampling": False}),
    (Flux2ProEditor, "/v1/flux-2-pro", {"disable_pup": True}),
    (Flux2FlexEditor, "/v1/flux-2-flex", {"prompt_upsampling": False, "steps": 50, "guidance": 5.0}),
])
def test_each_editor_submits_its_schema_s_fields(make_editor: MakeEditor, server: BFLFakeServer, cls: type[BflEditor],
                                                 path: str, fields: dict[str, Any]) -> None:
    req = request(seed=2**40 + 5)
    result = edit(make_editor(cls), req)
    assert result.outcome is Outcome.OK
    assert result.image == fake_edit(req.image, req.instruction)  # png: the fake's edit, byte for byte
    (submit,) = [r for r in server.requests if r.method == "POST"]
    assert submit.path == path and submit.headers["x-key"] == DEFAULT_KEY
    assert submit.headers["content-type"] == "application/json"
    body = server.last()
    assert body == {"prompt": req.instruction, "input_image": base64.b64encode(req.image).decode(),
                    "seed": 5, "output_format": "png", "safety_tolerance": 2, **fields}  # seed mod 2**31


def test_polls_go_to_the_polling_url_with_the_key_and_downloads_without(make_editor: MakeEditor,
                                                                          server: BFLFakeServer) -> None:
    assert edit(make_editor()).outcome is Outcome.OK
    polls = [r for r in server.requests if r.path.startswith("/v1/get_result?id=")]
    downloads = [r for r in server.requests if r.path.startswith("/delivery/")]
    assert polls and all(r.method == "GET" and r.headers["x-key"] == DEFAULT_KEY for r in polls)
    assert len(downloads) == 1 and server.key_sent_to_delivery == 0


def test_usage_records_bfl_s_task_and_credits_and_is_priced_per_image(make_editor: MakeEditor) -> None:
    editor = make_editor(Flux2ProEditor)
    result = edit(editor)
    usage = dict(result.usage)
    assert usage["images_out"] == 1 and usage["provider_credits"] == 3.0 and usage["polls"] >= 1
    assert usage["bfl_task_id"] and "input_mp" in usage and "output_mp" in usage
    assert editor.prices == {"images_out": 0.045, "as_of": "2026-12-01"}
    assert cost_usd(usage, editor.prices) == pytest.approx(0.045)


@pytest.mark.parametrize(("cls", "price"), [(KontextProEditor, 0.04), (KontextMaxEditor, 0.08),
                                            (Flux2ProEditor, 0.045), (Flux2FlexEditor, 0.10)])
def test_list_prices_are_dated(make_editor: MakeEditor, cls: type[BflEditor], price: float) -> None:
    assert make_editor(cls).prices == {"images_out": price, "as_of": "2026-12-01"}


def test_a_model_without_a_published_price_has_an_unknown_cost(make_editor: MakeEditor) -> None:
    assert make_editor(Flux2ProEditor, model="flux-2-pro-preview").prices == {}


def test_jpeg_output_and_other_input_formats(make_editor: MakeEditor, server: BFLFakeServer) -> None:
    buf = io.BytesIO()
    Image.open(io.BytesIO(gradient_image(4))).save(buf, format="BMP")
    result = edit(make_editor(output_format="jpeg"), request(buf.getvalue()))
    assert result.outcome is Outcome.OK and result.image.startswith(b"\xff\xd8\xff")
    sent = base64.b64decode(server.last()["input_image"])
    assert sent.startswith(b"\x89PNG") and server.last()["output_format"] == "jpeg"  # BMP re-encoded as PNG


def test_aspect_ratio_is_sent_only_when_set(make_editor: MakeEditor, server: BFLFakeServer) -> None:
    edit(make_editor(aspect_ratio="1:1"))
    assert server.last()["aspect_ratio"] == "1:1"


def test_describe_names_the_exact_model_and_never_the_key(make_editor: MakeEditor) -> None:
    editor = make_editor(Flux2FlexEditor)
    description = editor.describe()
    assert description["model"] == description["version"] == "flux-2-flex"
    assert description["title"] == "FLUX.2 [flex]" and description["request_schema"] == "Flux2FlexInputs"
    assert description["steps"] == 50 and description["guidance"] == 5.0 and description["prompt_upsampling"] is False
    assert DEFAULT_KEY not in repr(description) + repr(editor.connection) + editor.limits.provider_key


def test_is_an_async_editor_with_one_client_per_event_loop(make_editor: MakeEditor) -> None:
    editor = make_editor()
    assert isinstance(editor, AsyncEditor)
    assert edit(editor).outcome is Outcome.OK
    assert edit(editor).outcome is Outcome.OK  # a second asyncio.run: a new loop, a new client


# -- regions, keys and configuration ---------------------------------------------------------


@pytest.mark.parametrize(("region", "endpoint"), list(REGIONS.items()))
def test_regions_select_bfl_s_endpoints(region: str, endpoint: str) -> None:
    editor = KontextProEditor(region=region, api_key_env=KEY_ENV)
    assert editor.connection.endpoint.url == endpoint
    assert editor.describe()["region"] == region and "base_url" not in editor.describe()
    assert editor.limits.provider_key == f"bfl:{endpoint}:{KEY_ENV}:flux-kontext-pro"


def test_the_key_goes_to_bfl_hosts_only() -> None:
    conn = KontextProEditor(api_key_env=KEY_ENV).connection
    assert conn.takes_key("https://api.bfl.ai/v1/get_result?id=1")
    assert conn.takes_key("https://api.eu1.bfl.ai/v1/get_result?id=1")  # global hands out regional clusters' URLs
    assert not conn.takes_key("https://evil.example/v1/get_result?id=1")
    assert not conn.takes_key("http://api.eu1.bfl.ai/v1/get_result?id=1")  # never in clear text
    assert not conn.takes_key("https://bfl.ai.evil.example/x")


def test_a_polling_url_off_the_api_host_is_not_sent_the_key(make_editor: MakeEditor, server: BFLFakeServer,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.fakes.bfl as fake_module

    real = fake_module.FakeResponse.json

    def elsewhere(status: int, obj: Any, **headers: str) -> Any:
        if isinstance(obj, dict) and "polling_url" in obj:
            obj = {**obj, "polling_url": obj["polling_url"].replace("127.0.0.1", "localhost")}
        return real(status, obj, **headers)

    monkeypatch.setattr(fake_module.FakeResponse, "json", staticmethod(elsewhere))
    result = edit(make_editor())
    assert result.outcome is Outcome.API_ERROR and "not on the API host" in result.reason
    assert not any(r.path.startswith("/v1/get_result") for r in server.requests)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BFL_API_KEY", raising=False)
    with pytest.raises(MissingSecretError, match="BFL_API_KEY"):
        KontextProEditor()


@pytest.mark.parametrize(("params", "message"), [
    ({"region": "asia"}, "region must be one of global, eu, us"),
    ({"base_url": "api.bfl.ai"}, "must start with http"),
    ({"model": "flux-2-pro"}, "model must be one of flux-kontext-pro"),
    ({"safety_tolerance": 7}, "from 0 (strictest) to 6"),
    ({"output_format": "webp"}, "output_format must be one of png, jpeg"),
    ({"poll_interval_s": 0}, "poll_interval_s must be a positive number"),
    ({"limits": {"timeout_s": 100.0}}, "limits.timeout_s=100 must be at least request_timeout_s + poll_timeout_s"),
    ({"limits": {"provider_key": "x"}}, "provider_key is derived"),
    ({"prices": {"per_image": 1}}, "unknown price key"),
])
def test_configuration_mistakes_are_clear_errors(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        KontextProEditor(api_key_env=KEY_ENV, **params)


def test_flux2_caps_safety_tolerance_at_5_and_flex_checks_its_controls() -> None:
    with pytest.raises(ConfigError, match="to 5 for flux-2-pro"):
        Flux2ProEditor(api_key_env=KEY_ENV, safety_tolerance=6)
    with pytest.raises(ConfigError, match="steps must be an integer from 1 to 50"):
        Flux2FlexEditor(api_key_env=KEY_ENV, steps=80)
    with pytest.raises(ConfigError, match="guidance must be from 1.5 to 10"):
        Flux2FlexEditor(api_key_env=KEY_ENV, guidance=1.0)


def test_kontext_max_defaults_to_bfl_s_six_active_tasks() -> None:
    assert KontextMaxEditor(api_key_env=KEY_ENV).limits.max_concurrency == 6
    assert KontextProEditor(api_key_env=KEY_ENV).limits.max_concurrency == 24
    assert KontextProEditor(api_key_env=KEY_ENV).limits.requests_per_minute is None


# -- faults and outcomes ---------------------------------------------------------------------


@pytest.mark.parametrize(("fault", "outcome", "reason"), [
    ("request_moderated", Outcome.REFUSED, "Request Moderated: the request (prompt or input image) was moderated "
                                           "(Derivative Works)"),
    ("content_moderated", Outcome.REFUSED, "Content Moderated: the generated image was moderated (NSFW)"),
    ("error", Outcome.API_ERROR, "status Error (error: Generation failed, please try again.)"),
    ("task_not_found", Outcome.API_ERROR, "status Task not found"),
    ("never_ready", Outcome.API_ERROR, "was not finished 1 s after submission (poll_timeout_s; last: status Pending"),
    ("expired_url_always", Outcome.API_ERROR, "the result URL had expired and re-polling gave no valid one"),
    ("bad_request", Outcome.API_ERROR, "submit: HTTP 422: body.aspect_ratio: Aspect ratio must be between"),
    ("no_credits", Outcome.API_ERROR, "submit: HTTP 402: Insufficient credits"),
])
def test_permanent_faults_end_as_their_outcome_after_one_submission(make_editor: MakeEditor, server: BFLFakeServer,
                                                                    fault: str, outcome: Outcome,
                                                                    reason: str) -> None:
    server.script([fault])
    result, executor = through_executor(make_editor())
    assert result.outcome is outcome and result.image is None
    assert reason in result.reason
    assert executor.stats.attempts == 1 and server.calls - server.polls - server.downloads == 1  # one submission


@pytest.mark.parametrize("fault", ["slow", "slow_poll", "poll_500", "poll_429", "expired_url", "truncated_download"])
def test_faults_after_the_submission_are_handled_inside_the_task(make_editor: MakeEditor, server: BFLFakeServer,
                                                                 fault: str) -> None:
    server.script([fault])
    result, executor = through_executor(make_editor())
    assert result.outcome is Outcome.OK, result.reason
    assert len(server.submissions) == 1 and executor.stats.attempts == 1  # never resubmitted
    counted = executor.stats.as_dict()["other_requests"]
    assert counted == {"poll": server.polls, "download": server.downloads}
    if fault in ("expired_url", "truncated_download"):
        assert server.downloads == 2  # the second from a fresh URL got by re-polling


@pytest.mark.parametrize(("fault", "kind", "status"), [
    ("429", "rate_limited", 429), ("500", "server_error", 500), ("503", "server_error", 503),
    ("truncated", "truncated", None), ("timeout", "timeout", None)])
def test_a_failed_submission_raises_retryable(make_editor: MakeEditor, server: BFLFakeServer, fault: str, kind: str,
                                             status: int | None) -> None:
    server.script([fault])
    with pytest.raises(RetryableError) as caught:
        edit(make_editor(request_timeout_s=SHORT_REQUEST_TIMEOUT_S) if fault == "timeout" else make_editor())
    assert (caught.value.kind, caught.value.status) == (kind, status)
    if fault == "429":
        assert caught.value.retry_after == 0.05
    if fault != "timeout":  # a late answer's task is made after the client gave up
        # 429 and 5xx: no task; a cut-off answer: the task exists (and would be charged) all the same
        assert len(server.submissions) == (fault == "truncated")


def test_the_core_retries_a_failed_submission_once_per_attempt(make_editor: MakeEditor, server: BFLFakeServer) -> None:
    server.script(["429", "500"])
    result, executor = through_executor(make_editor())
    assert result.outcome is Outcome.OK
    stats = executor.stats.as_dict()
    assert stats["attempts"] == 3 and stats["retries"] == {"rate_limited": 1, "server_error": 1}
    assert len(server.submissions) == 1 and stats["other_requests"]["poll"] == server.polls


def test_downloads_cut_short_every_time_are_retryable(make_editor: MakeEditor, server: BFLFakeServer) -> None:
    server.script(["truncated_download_always"])
    with pytest.raises(RetryableError) as caught:
        edit(make_editor())
    assert caught.value.kind == "truncated" and "download failed 3 times" in str(caught.value)
    assert server.downloads == 3 and len(server.submissions) == 1


def test_the_active_task_limit_bounds_concurrency() -> None:
    with bfl_server(generation_s=0.2, max_active=4, retry_after=0.05) as fake:
        editor = KontextProEditor(base_url=fake.url, api_key_env=KEY_ENV, poll_interval_s=0.02,
                                  limits={"max_concurrency": 4, "backoff_initial_s": 0.01})
        executor = Executor(editor.limits)

        async def main() -> list[EditResult]:
            return await asyncio.gather(*(executor.call(lambda i=i: editor.aedit(request(seed=i))) for i in range(12)))

        results = asyncio.run(main())
    assert [r.outcome for r in results] == [Outcome.OK] * 12
    assert fake.peak_active <= 4 and executor.stats.attempts == 12  # no submission was turned away
    assert executor.stats.other_requests["poll"] == fake.polls


def test_a_wrong_key_is_api_error_and_not_echoed(make_editor: MakeEditor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "bfl-wrong-key-1234")
    result = edit(make_editor())
    assert result.outcome is Outcome.API_ERROR and result.reason == "submit: HTTP 403: Not authenticated"


def test_a_refused_connection_is_retryable() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    editor = KontextProEditor(base_url=f"http://127.0.0.1:{port}", api_key_env=KEY_ENV)
    with pytest.raises(RetryableError) as caught:
        edit(editor)
    assert caught.value.kind == "connection"
