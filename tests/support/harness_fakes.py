"""Scripted stand-ins for the model APIs of Claude Code, Gemini CLI and Codex, so that the real CLIs run offline in
tests/surfaces/test_harness_clis.py. Standard library only: an HTTP server on a free loopback port, in a thread.

A script is a list of :class:`Turn` s, one per model turn of the agent loop: tool calls, or a final text.
The turn answered is the number of model turns already in the request's conversation, so a retried request
gets the same turn again. A turn's ``before`` callback runs once, just before the turn is first answered:
the tool results of the previous turn are in, the turn's own calls are not yet made (a change "from
outside" between two tool calls). Every agent-loop request body is kept in ``requests``; side calls
(titles, routing, next-speaker checks) get a harmless answer and are kept in ``side_requests``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    """One model turn: ``calls`` as (tool name, arguments), or else the final ``text``."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = "done"
    before: Callable[[], None] | None = None


def call(tool: str, before: Callable[[], None] | None = None, **arguments: Any) -> Turn:
    return Turn(calls=[(tool, arguments)], before=before)


class FakeModelAPI:
    """The common part: the server, the script, the records. Subclasses speak one API."""

    def __init__(self, script: list[Turn]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.side_requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._started: set[int] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeModelAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- what a subclass says --------------------------------------------------------------------------

    def is_agent_request(self, path: str, body: dict[str, Any]) -> bool:
        raise NotImplementedError

    def model_turns(self, body: dict[str, Any]) -> int:
        raise NotImplementedError

    def agent_reply(self, turn: Turn, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        raise NotImplementedError

    def side_reply(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        raise NotImplementedError

    # --- the server ------------------------------------------------------------------------------------

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if not self.is_agent_request(path, body):
            with self._lock:
                self.side_requests.append({"path": path, "body": body})
            return self.side_reply(path, body)
        index = self.model_turns(body)
        turn = self.script[index] if index < len(self.script) else Turn(text="done")
        with self._lock:
            self.requests.append(body)
            first = index not in self._started
            self._started.add(index)
        if first and turn.before is not None:
            try:
                turn.before()
            except Exception as exc:  # seen by the test, not lost in the server's thread
                self.errors.append(f"turn {index}: before(): {exc!r}")
        return self.agent_reply(turn, path, body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, content_type: str, data: bytes, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send("application/json", b"{}")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                try:
                    content_type, data = api._answer(self.path, body if isinstance(body, dict) else {})
                except Exception as exc:
                    api.errors.append(f"{self.path}: {exc!r}")
                    self._send("application/json", b'{"error": {"message": "fake API failure"}}', 500)
                    return
                self._send(content_type, data)

        return Handler


# --- Anthropic Messages API (Claude Code) ----------------------------------------------------------------

_ids = itertools.count(1)


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropic(FakeModelAPI):
    """``POST /v1/messages``. Agent-loop requests carry a ``tools`` list. Every reply has its own message id
    (Claude Code merges replies that share one into a single turn)."""

    def is_agent_request(self, path: str, body: dict[str, Any]) -> bool:
        return path.split("?")[0].endswith("/v1/messages") and bool(body.get("tools"))

    def model_turns(self, body: dict[str, Any]) -> int:
        return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")

    def _blocks(self, turn: Turn) -> tuple[list[dict[str, Any]], str]:
        if not turn.calls:
            return [{"type": "text", "text": turn.text}], "end_turn"
        blocks = [
            {"type": "tool_use", "id": f"toolu_fake_{next(_ids):06d}", "name": name, "input": arguments}
            for name, arguments in turn.calls
        ]
        return blocks, "tool_use"

    def _message(self, blocks: list[dict[str, Any]], stop: str, body: dict[str, Any]) -> tuple[str, bytes]:
        message = {
            "id": f"msg_fake_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        if not body.get("stream"):
            return "application/json", json.dumps(message).encode()
        start = {**message, "content": [], "stop_reason": None}
        stream = [_event("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                empty: dict[str, Any] = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                empty = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            stream.append(
                _event("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty})
            )
            stream.append(
                _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
            stream.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
        ending = {"stop_reason": stop, "stop_sequence": None}
        stream.append(
            _event("message_delta", {"type": "message_delta", "delta": ending, "usage": {"output_tokens": 5}})
        )
        stream.append(_event("message_stop", {"type": "message_stop"}))
        return "text/event-stream", b"".join(stream)

    def agent_reply(self, turn: Turn, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        blocks, stop = self._blocks(turn)
        return self._message(blocks, stop, body)

    def side_reply(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if path.split("?")[0].endswith("/count_tokens"):
            return "application/json", b'{"input_tokens": 10}'
        if not path.split("?")[0].endswith("/v1/messages"):
            return "application/json", b"{}"
        return self._message([{"type": "text", "text": "ok"}], "end_turn", body)

    def tool_results(self, request: int = -1) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of an agent request (default: the last)."""
        found = []
        for message in self.requests[request].get("messages", []):
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list):
                found += [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        return found


# --- Gemini API (Gemini CLI) ------------------------------------------------------------------------------


def _value_of(schema: object, name: str = "") -> Any:
    """A value of a JSON schema, as a side call asks for one (the router's score, next-speaker checks)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _value_of(schema[key][0], name)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((each for each in kind if each != "null"), "string")
    kind = str(kind).lower()
    if kind == "object":
        return {key: _value_of(value, key) for key, value in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_value_of(schema.get("items"), name) for _ in range(int(schema.get("minItems") or 0))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return "user" if name == "next_speaker" else f"fake {name or 'value'}"


class FakeGemini(FakeModelAPI):
    """``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (and ``:generateContent``). Agent-loop
    requests carry ``functionDeclarations``; side calls asking for JSON get a value of their schema (else
    the CLI retries them for minutes)."""

    def is_agent_request(self, path: str, body: dict[str, Any]) -> bool:
        return any(tool.get("functionDeclarations") for tool in body.get("tools") or [] if isinstance(tool, dict))

    def model_turns(self, body: dict[str, Any]) -> int:
        return sum(1 for content in body.get("contents", []) if content.get("role") == "model")

    def _reply(self, parts: list[dict[str, Any]], path: str) -> tuple[str, bytes]:
        reply = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "fake",
        }
        if ":streamGenerateContent" in path:
            return "text/event-stream", f"data: {json.dumps(reply)}\r\n\r\n".encode()
        return "application/json", json.dumps(reply).encode()

    def agent_reply(self, turn: Turn, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if not turn.calls:
            return self._reply([{"text": turn.text}], path)
        return self._reply([{"functionCall": {"name": name, "args": args}} for name, args in turn.calls], path)

    def side_reply(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if ":countTokens" in path:
            return "application/json", b'{"totalTokens": 10}'
        if ":embedContent" in path or ":batchEmbedContents" in path:
            return "application/json", json.dumps({"embedding": {"values": [0.0] * 8}}).encode()
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if schema is not None or config.get("responseMimeType") == "application/json":
            text = json.dumps(_value_of(schema or {"type": "object"}))
        else:
            text = "ok"
        return self._reply([{"text": text}], path)

    def function_responses(self, request: int = -1) -> list[dict[str, Any]]:
        """The ``functionResponse`` parts of an agent request (default: the last)."""
        found = []
        for content in self.requests[request].get("contents", []):
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "functionResponse" in part:
                    found.append(part["functionResponse"])
        return found


# --- OpenAI Responses API (Codex) -------------------------------------------------------------------------

_MODEL_ITEMS = frozenset({"function_call", "custom_tool_call", "reasoning"})
_CALL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


class FakeOpenAI(FakeModelAPI):
    """``POST /v1/responses``, answered as a server-sent event stream. A call is ``(name, arguments)``: a
    dict of arguments makes a ``function_call`` (``exec_command``), a string a ``custom_tool_call`` whose
    ``input`` it is (the freeform ``apply_patch`` tool). Codex sends the conversation as ``input`` items; the
    model's turns in it are the runs of consecutive model items (calls, assistant messages). Each request
    names its session (``client_metadata.session_id``): kept in ``sessions``."""

    def __init__(self, script: list[Turn]) -> None:
        super().__init__(script)
        self.sessions: list[str] = []

    def is_agent_request(self, path: str, body: dict[str, Any]) -> bool:
        return path.split("?")[0].endswith("/responses") and bool(body.get("tools"))

    def model_turns(self, body: dict[str, Any]) -> int:
        turns, inside = 0, False
        for item in body.get("input") or []:
            if not isinstance(item, dict):
                continue
            by_model = item.get("type") in _MODEL_ITEMS or (
                item.get("type") == "message" and item.get("role") == "assistant"
            )
            turns += by_model and not inside
            inside = by_model
        return turns

    def _items(self, turn: Turn) -> list[dict[str, Any]]:
        if not turn.calls:
            text = {"type": "output_text", "text": turn.text, "annotations": []}
            return [{"type": "message", "id": f"msg_{next(_ids)}", "role": "assistant", "content": [text]}]
        items = []
        for name, arguments in turn.calls:
            number = next(_ids)
            if isinstance(arguments.get("input"), str) and len(arguments) == 1:
                item = {"type": "custom_tool_call", "id": f"ctc_{number}", "name": name, "input": arguments["input"]}
            else:
                item = {"type": "function_call", "id": f"fc_{number}", "name": name, "arguments": json.dumps(arguments)}
            items.append({**item, "call_id": f"call_{number}", "status": "completed"})
        return items

    def _stream(self, items: list[dict[str, Any]]) -> tuple[str, bytes]:
        response = {"id": f"resp_{next(_ids)}", "object": "response", "status": "in_progress", "output": []}
        chunks = [_event("response.created", {"type": "response.created", "response": response})]
        for index, item in enumerate(items):
            for kind in ("response.output_item.added", "response.output_item.done"):
                chunks.append(_event(kind, {"type": kind, "output_index": index, "item": item}))
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        done = {**response, "status": "completed", "output": items, "usage": usage}
        chunks.append(_event("response.completed", {"type": "response.completed", "response": done}))
        return "text/event-stream", b"".join(chunks)

    def agent_reply(self, turn: Turn, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        session = (body.get("client_metadata") or {}).get("session_id") or body.get("prompt_cache_key")
        if session:
            with self._lock:
                if session not in self.sessions:
                    self.sessions.append(str(session))
        return self._stream(self._items(turn))

    def side_reply(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        if not path.split("?")[0].endswith("/responses"):
            return "application/json", b"{}"
        return self._stream(self._items(Turn(text="ok")))

    def call_outputs(self, request: int = -1) -> list[dict[str, Any]]:
        """The ``function_call_output`` and ``custom_tool_call_output`` items of an agent request (default:
        the last), in order."""
        items = self.requests[request].get("input") or []
        return [item for item in items if isinstance(item, dict) and item.get("type") in _CALL_OUTPUTS]
