"""Provider failures are told apart by their class (litellm's, openai's, httpx's), never by matching class
names as strings; an exception of another client is read by its HTTP status (issue 31, item 3)."""

from __future__ import annotations

import pytest

from ccm_tui.core.models.provider_errors import (
    AUTH,
    BAD_REQUEST,
    CONNECTION,
    CONTEXT_WINDOW,
    NOT_FOUND,
    OTHER,
    RATE_LIMIT,
    TRANSIENT,
    classify,
    failure_kind,
)


@pytest.fixture(scope="module")
def litellm():
    return pytest.importorskip("litellm")


def test_litellm_exceptions_map_by_class(litellm):
    args = {"llm_provider": "openai", "model": "gpt-x"}
    e = litellm.exceptions
    assert failure_kind(e.RateLimitError("slow down", **args)) is RATE_LIMIT
    assert failure_kind(e.AuthenticationError("bad key", **args)) is AUTH
    assert failure_kind(e.NotFoundError("no such model", **args)) is NOT_FOUND
    assert failure_kind(e.ContextWindowExceededError("too long", **args)) is CONTEXT_WINDOW  # (a BadRequestError too)
    assert failure_kind(e.BadRequestError("bad", **args)) is BAD_REQUEST
    assert failure_kind(e.Timeout("late", **args)) is TRANSIENT  # (openai's timeout is a connection error too)
    assert failure_kind(e.InternalServerError("boom", **args)) is TRANSIENT
    assert failure_kind(e.APIConnectionError("no route", **args)) is CONNECTION


def test_a_class_named_like_a_provider_error_is_not_one():
    class RateLimitError(Exception):  # a name alone says nothing
        pass

    assert failure_kind(RateLimitError("x")) is None
    assert classify(RateLimitError("x"), "m").kind is OTHER


def test_another_clients_error_is_read_by_its_status():
    class HTTPError(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(f"status {status}")
            self.status_code = status

    assert [failure_kind(HTTPError(s)) for s in (429, 401, 403, 404, 400, 503)] == [
        RATE_LIMIT,
        AUTH,
        AUTH,
        NOT_FOUND,
        BAD_REQUEST,
        TRANSIENT,
    ]
    assert classify(HTTPError(429), "m").kind is RATE_LIMIT
