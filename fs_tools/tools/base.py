"""What a tool is: one declaration of its arguments and output, a description that states its
preconditions, and a body that calls the policy and the provider and renders text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fs_tools.arguments import ToolArgs, ToolOutputModel, published_schema
from fs_tools.errors import Aborted
from fs_tools.provider import CancelToken, Provider
from policy import ObservationStore, ProtectedPaths

A = TypeVar("A", bound=ToolArgs)


@dataclass(frozen=True)
class ToolOutput:
    """What a tool body returns: the text the model sees and the structured value."""

    text: str
    value: dict[str, Any]


@dataclass
class ToolContext:
    """Everything a tool body may use for one call."""

    provider: Provider
    store: ObservationStore
    session: str
    read_only: bool
    protected: ProtectedPaths
    cancel: CancelToken | None = None
    search_seconds: float = 10.0

    def check_cancelled(self, what: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Aborted(f"{what} was cancelled before anything was written")


@dataclass(frozen=True)
class Tool(Generic[A]):
    """A model-facing tool."""

    name: str
    description: str
    arguments: type[A]
    output: type[ToolOutputModel]
    run: Callable[[ToolContext, A], ToolOutput]
    read_only: bool

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": published_schema(self.arguments)}
