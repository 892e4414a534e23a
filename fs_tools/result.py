"""``ToolResult``: what every call returns, success or failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fs_tools.errors import ErrorInfo, HarnessError


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call.

    ``text`` is what the model sees; ``value`` the structured output on success; ``error`` the name,
    code and message on failure. ``exception`` keeps the boundary's exception, whose ``__cause__`` is
    the lower layer's original error, for hosts that log or inspect it.
    """

    text: str
    value: Any = None
    error: ErrorInfo | None = None
    exception: HarnessError | None = field(default=None, compare=False, repr=False)

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def success(cls, text: str, value: Any) -> ToolResult:
        return cls(text=text, value=value)

    @classmethod
    def failure(cls, exc: HarnessError) -> ToolResult:
        return cls(text=exc.message, error=exc.info, exception=exc)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"isError": self.is_error, "content": [{"type": "text", "text": self.text}]}
        if self.error is not None:
            out["error"] = {"message": self.error.message, "info": {"name": self.error.name, "code": self.error.code}}
        return out
