"""JSON-RPC over lines, leniently: every request gets an answer. A line the SDK's parser refuses is
answered or read our way instead of dropped in silence, and a reply the SDK cannot serialise is still
written."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any, Protocol

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

log = logging.getLogger("fs_tools.mcp")


# --- the stdio wire: lines in, lines out ---------------------------------------------------------------


class LineSink(Protocol):
    """Where replies go, one line each: ``write`` queues, ``flush`` waits until the wire took it."""

    async def write(self, text: str) -> None: ...

    async def flush(self) -> None: ...


# --- JSON-RPC over lines: every request gets an answer ---------------------------------------------------


@contextlib.asynccontextmanager
async def jsonrpc_streams(
    lines: AsyncIterator[str], out: LineSink
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The server's message streams over a line transport, as the SDK's ``stdio_server`` gives them,
    with one difference: a line the SDK's parser refuses is never dropped in silence (see
    ``inbound_message``), and a reply the SDK cannot serialise is still written (see ``wire_text``)."""
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    replies = outbound.clone()  # the reader answers what it cannot hand to the server

    async def read_lines() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with inbound_send, replies:
                async for line in lines:
                    message = inbound_message(line)
                    if isinstance(message, types.JSONRPCError):
                        await replies.send(SessionMessage(message))
                    elif message is not None:
                        await inbound_send.send(message)

    async def write_lines() -> None:
        try:
            async with outbound_receive:
                async for message in outbound_receive:
                    await out.write(wire_text(message.message) + "\n")
                    await out.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client closed its end: the session is over
            log.info("the client stopped reading; ending the session")
            tasks.cancel_scope.cancel()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_lines)
        tasks.start_soon(write_lines)
        yield inbound, outbound


def inbound_message(line: str) -> SessionMessage | types.JSONRPCError | None:
    """One wire line as a message for the server, or the error its sender gets instead of silence
    (None: nothing to answer — a blank line, or a notification or response that cannot be read).

    The SDK's parser refuses some JSON that RFC 8259 allows — a lone surrogate escape (``"\\ud800"``),
    an integer of thousands of digits — and a message it cannot parse would get no reply at all, so
    its client would wait forever. Such a line is read again by Python's parser: a ``tools/call`` whose
    envelope is sound goes on with its arguments as JSON text (``ArgumentsText``), so the client gets
    the ``INVALID_ARGS`` result the library gives for the same JSON; any other request gets a JSON-RPC
    error with its id where the id can be read, ``null`` where it cannot."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception:  # whatever the strict parser refuses, the lenient one decides about
        pass
    if not line.strip():
        return None
    try:
        value = json.loads(line, parse_int=_integer, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        return _error_reply(None, types.PARSE_ERROR, f"Parse error: {exc}")
    if _unanswerable(value):
        log.warning("dropped a message the server cannot read: %s", ascii(line[:200]))
        return None
    request_id = _readable_id(value)
    if request_id is not None and isinstance(value, dict):
        try:
            repaired = _call_with_arguments_as_text(value)
        except RecursionError:
            repaired = None
        if repaired is not None:
            return repaired
    return _error_reply(
        request_id, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request this server reads"
    )


def _unanswerable(value: object) -> bool:
    """A notification or a response: JSON-RPC has no way to answer either."""
    if not isinstance(value, dict):
        return False
    if "method" in value:
        return "id" not in value
    return "id" in value and ("result" in value or "error" in value)


class ArgumentsText(dict[str, Any]):
    """A ``tools/call``'s arguments that the SDK's parser refused, kept as JSON text.

    An (empty) dict, so the SDK's request validation lets the call through; the tool handler hands
    ``text`` to the library, which parses it as it parses any JSON string of arguments."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class _LongInt(str):
    """An integer literal longer than ``int()`` takes (``sys.get_int_max_str_digits()``), kept as text."""

    __slots__ = ()


def _integer(literal: str) -> int | _LongInt:
    try:
        return int(literal)
    except ValueError:
        return _LongInt(literal)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain(value: object) -> bool:
    """No lone surrogate and no over-long integer anywhere in ``value``: what the SDK could have parsed."""
    if isinstance(value, _LongInt):
        return False
    if isinstance(value, str):
        return _SURROGATE.search(value) is None
    if isinstance(value, dict):
        return all(_plain(key) and _plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return True


def _readable_id(value: object) -> int | str | None:
    request_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not _plain(request_id):
        return None
    return request_id


def _call_with_arguments_as_text(value: dict[str, Any]) -> SessionMessage | None:
    params = value.get("params")
    if value.get("method") != "tools/call" or not isinstance(params, dict) or "arguments" not in params:
        return None
    envelope = {**value, "params": {**params, "arguments": ArgumentsText(_json_text(params["arguments"]))}}
    if not _plain(envelope):
        return None  # the trouble is outside the arguments: the request itself cannot be read
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(envelope, by_name=False))
    except ValueError:
        return None


def _json_text(value: object) -> str:
    """``value`` as JSON again: over-long integers as their digits, lone surrogates as escapes."""
    if isinstance(value, _LongInt):
        return str.__str__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_json_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_text(item) for item in value) + "]"
    return json.dumps(value)


def _error_reply(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def wire_text(message: types.JSONRPCMessage) -> str:
    """One message as a line of JSON. A string holding a lone surrogate (a tool name the client sent,
    echoed in an error) cannot be UTF-8: it goes out as a ``\\uXXXX`` escape, as the client sent it."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's PydanticSerializationError
        return json.dumps(message.model_dump(by_alias=True, exclude_unset=True), default=str)
