"""What a tool is: one declaration of its arguments and output, a description that states its
preconditions, and a body that calls the policy and the provider and renders text."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from fs_tools.arguments import ToolArgs, ToolOutputModel, published_schema
from fs_tools.errors import Aborted, HarnessError
from fs_tools.history.model import HistoryStore
from fs_tools.options import Options
from fs_tools.provider import CancelToken, Provider
from fs_tools.result import Media
from policy import ObservationStore

A = TypeVar("A", bound=ToolArgs)


class ReadWindows(Protocol):
    """What a session last read of each file (``read.ReadMemory``)."""

    def last(self, session: str, key: str) -> tuple[str, int, int] | None: ...

    def remember(self, session: str, key: str, window: tuple[str, int, int]) -> None: ...

    def forget(self, session: str, key: str | None = None) -> None: ...


@dataclass(frozen=True)
class ToolOutput:
    """What a tool body returns: the text the model sees, the structured value, and any images."""

    text: str
    value: dict[str, Any]
    media: tuple[Media, ...] = ()


@dataclass
class ToolContext:
    """Everything a tool body may use for one call."""

    provider: Provider
    store: ObservationStore
    session: str
    options: Options = field(default_factory=Options)  # what the host chose (limits, checks, budgets)
    cancel: CancelToken | None = None
    reads: ReadWindows | None = None  # the session's last read windows, for brief re-reads (None: off)
    explain: Callable[[HarnessError], str] | None = None  # the boundary's words for an error shown inline
    history: HistoryStore | None = None  # where the session's committed changes are recorded (SPEC §16)
    tool: str = ""  # the tool called, as the model named it (what history records)
    call: str = ""  # this call's id: one call's changes (apply_patch's files) share it
    cells: bool = True  # read shows a notebook as its cells (the session has notebook_edit); else its JSON
    check_only: bool = False  # run every gate of a change, write nothing (``gating.Checked``): a hook's check

    def changed(self, key: str) -> None:
        """The session changed ``key``: its next read shows the whole text again."""
        if self.reads is not None:
            self.reads.forget(self.session, key)

    def check_cancelled(self, what: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Aborted(f"{what} was cancelled before anything was written")


# A short human-readable line for a call, from arguments that may be garbage; None: not recognised.
Presenter = Callable[[Mapping[str, Any]], "str | None"]


@dataclass(frozen=True)
class Example:
    """A tool's reference example: ``setup`` calls (tool name, arguments) made first in a scratch
    workspace, then the tool's own call with ``arguments``, shown with what it returns."""

    arguments: dict[str, Any]
    setup: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(frozen=True)
class Tool(Generic[A]):
    """A model-facing tool, declared once: everything the library, the references, the presenters and
    the boundary know of it is here."""

    name: str
    description: str  # what the model reads, preconditions included
    arguments: type[A]
    output: type[ToolOutputModel]
    run: Callable[[ToolContext, A], ToolOutput]
    read_only: bool
    preconditions: str  # for the reference: what must hold for the call to succeed
    example: Example
    present: Presenter | None = None  # None: the generic ``name(key=value, ...)`` rendering
    additive: bool = False  # it only adds, and again is the same (create_directory): not destructive, idempotent
    # A dialect's tool (SPEC §14): the fs-tools tools whose part it plays, each with how a remedy names
    # it ("{name}" is this tool's name as offered: "{name} with command view"); empty: it is one itself.
    stands_for: Mapping[str, str] = field(default_factory=dict)
    # A few words for people (an MCP client's tool picker: ``title``); a dialect's tool keeps the one of
    # the tool it is declared like.
    title: str = ""
    # What it lets the model do, as remedies speak of it (``fs_tools.abilities``): a remedy that needs one
    # names the tool on offer that has it.
    abilities: tuple[str, ...] = ()
    # fs-tools' argument names to this tool's, for the messages that answer its calls (``terms.py``)
    terms: Mapping[str, str] = field(default_factory=dict)
    # Its change can be checked without being made (``Session.check``): every write it makes goes through
    # ``gating.commit_gated``, or it raises ``gating.Checked`` itself before writing in check mode.
    checkable: bool = False
    # Whether a call's arguments (a mapping, or their JSON text) ask for slow work (an image decoded, the
    # PDF reader started): a server runs such a call in a worker thread even where it runs others inline.
    slow: Callable[[object], bool] | None = None

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": published_schema(self.arguments)}
