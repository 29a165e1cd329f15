"""A plain ASGI application serving one model through the OpenAI and Anthropic APIs (no web framework).

Routes:

* ``POST /v1/chat/completions`` (OpenAI Chat Completions; ``stream``, ``stream_options.include_usage``,
  ``n``, ``tools``, ``tool_choice``, ``max_tokens`` / ``max_completion_tokens``, ``temperature``, ``top_p``);
* ``POST /v1/responses`` (OpenAI Responses; streamed or not);
* ``POST /v1/messages`` (Anthropic Messages; streamed or not);
* ``GET /v1/models`` (the one model), ``GET /health``.

A request is validated first (`hf_response_templates.serve.protocol`): a bad one gets a 400 whose error
names the field (OpenAI's ``{"error": {"message", "type", "param", "code"}}``, Anthropic's ``{"type":
"error", "error": {...}}`` on ``/v1/messages``), as does a conversation the chat template refuses. The
generation runs in a worker thread (`ModelWorker`, one at a time); the app moves its output to the event
loop and watches the connection: when the client disconnects, the generation is cancelled at its next token
and the worker is free for the next request. A generation that fails after a stream started ends the stream
with an ``error`` event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from hf_response_templates.serve import apis
from hf_response_templates.serve.generate import ModelWorker
from hf_response_templates.serve.protocol import (
    RequestError,
    parse_chat_completions,
    parse_messages,
    parse_responses,
)

__all__ = ["ServeApp"]

logger = logging.getLogger("hf_response_templates.serve")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: the largest request body accepted (bytes)
MAX_BODY = 32 * 1024 * 1024

# path -> (request parser, streaming handler, non-streaming handler, error style)
_ROUTES: dict[str, tuple[Callable, Callable, Callable, str]] = {
    "/v1/chat/completions": (
        parse_chat_completions, apis.chat_completions_stream, apis.chat_completions_response, "openai"
    ),
    "/v1/responses": (parse_responses, apis.responses_stream, apis.responses_response, "responses"),
    "/v1/messages": (parse_messages, apis.messages_stream, apis.messages_response, "anthropic"),
}

_END = object()


class _Failure:
    def __init__(self, error: BaseException) -> None:
        self.error = error


class ServeApp:
    """The ASGI application (see the module docs); `hf_response_templates.serve.create_app` makes one.

    Args:
        worker: the `ModelWorker` running the model.
        model_name: the ``id`` in ``/v1/models`` and the ``model`` of responses (a request's own ``model``
            is echoed back when it gives one).
    """

    def __init__(self, worker: ModelWorker, *, model_name: str) -> None:
        self.worker = worker
        self.model_name = model_name
        self.created = int(time.time())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope["path"].rstrip("/") or "/"
        method = scope["method"]
        if path in _ROUTES:
            if method != "POST":
                await _json(send, 405, _error_body(_ROUTES[path][3], f"{path} takes POST", "invalid_request_error"),
                            [(b"allow", b"POST")])
                return
            await self._generate(path, scope, receive, send)
        elif path == "/v1/models" and method == "GET":
            await _json(send, 200, {"object": "list", "data": [self._model_card()]})
        elif path.startswith("/v1/models/") and method == "GET":
            name = path[len("/v1/models/"):]
            if name == self.model_name:
                await _json(send, 200, self._model_card())
            else:
                await _json(send, 404, _error_body("openai", f"model {name!r} not found", "not_found_error", "model"))
        elif path == "/health" and method == "GET":
            await _json(send, 200, {"status": "ok"})
        else:
            await _json(send, 404, _error_body("openai", f"no route {method} {path}", "not_found_error"))

    def _model_card(self) -> dict[str, Any]:
        return {"id": self.model_name, "object": "model", "created": self.created, "owned_by": "hf-response-templates"}

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _generate(self, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        parse, stream_handler, response_handler, style = _ROUTES[path]
        body = await _read_body(receive)
        if body is None:  # the client left while sending
            return
        if body is _TOO_LARGE:
            await _json(send, 413, _error_body(style, f"request body over {MAX_BODY} bytes", "invalid_request_error"))
            return
        try:
            try:
                data = json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise RequestError(None, f"the request body is not valid JSON ({e})") from None
            request, options = parse(data)
        except RequestError as e:
            await _json(send, 400, _error_body(style, str(e), "invalid_request_error", e.param))
            return
        options.model = options.model or self.model_name
        try:
            prepared = await asyncio.get_running_loop().run_in_executor(None, self.worker.prepare, request)
        except Exception as e:  # noqa: BLE001 - the chat template refused the conversation (jinja raises)
            message = f"the chat template cannot render this conversation: {type(e).__name__}: {e}"
            await _json(send, 400, _error_body(style, message, "invalid_request_error", "messages"))
            return
        cancel = threading.Event()
        handler = stream_handler if options.stream else response_handler

        def produce() -> Iterator[Any]:
            result = handler(self.worker, prepared, options, cancel)
            if options.stream:
                yield from result
            else:
                yield result

        queue = _Bridge(asyncio.get_running_loop(), cancel)
        queue.start(produce)
        disconnect = asyncio.ensure_future(_wait_for_disconnect(receive))
        started = False
        try:
            while True:
                item = await queue.get(disconnect)
                if item is None or item is _END:  # the client disconnected / the generation ended
                    break
                if isinstance(item, _Failure):
                    logger.error("generation failed: %r", item.error, exc_info=item.error)
                    text = f"generation failed: {type(item.error).__name__}: {item.error}"
                    if started:
                        await send({"type": "http.response.body", "body": _stream_error(style, text), "more_body": True})
                    else:
                        await _json(send, 500, _error_body(style, text, "server_error"))
                        return
                    break
                if not options.stream:
                    await _json(send, 200, item)
                    return
                if not started:
                    started = True
                    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                await send({"type": "http.response.body", "body": item.encode("utf-8"), "more_body": True})
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            elif options.stream and not disconnect.done():  # (cannot happen: a stream always sends)
                await _json(send, 500, _error_body(style, "the generation produced nothing", "server_error"))
        except OSError:  # the connection broke while sending
            pass
        finally:
            cancel.set()  # the generation stops at its next token if it is still running
            disconnect.cancel()


_SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]


class _Bridge:
    """Runs a synchronous generator in a thread and hands its items to the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cancel: threading.Event) -> None:
        self.loop = loop
        self.cancel = cancel
        self.queue: asyncio.Queue = asyncio.Queue()

    def _put(self, item: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed (server shutting down)
            self.cancel.set()

    def start(self, factory: Callable[[], Iterator[Any]]) -> None:
        def run() -> None:
            iterator = factory()
            try:
                for item in iterator:
                    if self.cancel.is_set():
                        break
                    self._put(item)
                self._put(_END)
            except BaseException as e:  # noqa: BLE001 - reported to the client
                self._put(_Failure(e))
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()

        threading.Thread(target=run, name="hf-response-templates-request", daemon=True).start()

    async def get(self, disconnect: asyncio.Future) -> Any:
        """The next item, or None once the client disconnected."""
        getter = asyncio.ensure_future(self.queue.get())
        done, _ = await asyncio.wait({getter, disconnect}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return getter.result()
        getter.cancel()
        self.cancel.set()
        return None


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


_TOO_LARGE: Any = object()  # a sentinel (never a real body)


async def _read_body(receive: Receive) -> Any:
    """The request body; None if the client disconnected, `_TOO_LARGE` (read, not kept) over `MAX_BODY`."""
    parts = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= MAX_BODY:
            parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts) if size <= MAX_BODY else _TOO_LARGE


async def _json(send: Send, status: int, body: Any, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                        *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _error_body(style: str, message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    if style == "anthropic":
        kind = {"server_error": "api_error"}.get(kind, kind)
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def _stream_error(style: str, message: str) -> bytes:
    if style == "openai":
        return ("data: " + json.dumps({"error": {"message": message, "type": "server_error"}}) + "\n\n").encode()
    if style == "anthropic":
        event: dict[str, Any] = {"type": "error", "error": {"type": "api_error", "message": message}}
    else:
        event = {"type": "error", "code": "server_error", "message": message, "param": None}
    return f"event: error\ndata: {json.dumps(event)}\n\n".encode()
