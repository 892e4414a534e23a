"""``ToolResult``: what every call returns, success or failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fs_tools.errors import ErrorInfo, HarnessError


@dataclass(frozen=True)
class Media:
    """An image a result shows the model besides its text: the encoded bytes and their MIME type
    (``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``)."""

    mime_type: str
    data: bytes = field(repr=False)

    @property
    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call.

    ``text`` is what the model sees; ``value`` the structured output on success; ``error`` the name,
    code and message on failure; ``media`` the images it shows (a ``read`` of an image), after the text.
    ``exception`` keeps the boundary's exception, whose ``__cause__`` is the lower layer's original
    error, for hosts that log or inspect it.
    """

    text: str
    value: Any = None
    error: ErrorInfo | None = None
    exception: HarnessError | None = field(default=None, compare=False, repr=False)
    media: tuple[Media, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def success(cls, text: str, value: Any, media: tuple[Media, ...] = ()) -> ToolResult:
        return cls(text=text, value=value, media=media)

    @classmethod
    def failure(cls, exc: HarnessError) -> ToolResult:
        return cls(text=exc.message, error=exc.info, exception=exc)

    def to_dict(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.text}]
        content += [{"type": "image", "data": item.base64, "mimeType": item.mime_type} for item in self.media]
        out: dict[str, Any] = {"isError": self.is_error, "content": content}
        if self.error is not None:
            out["error"] = {"message": self.error.message, "info": {"name": self.error.name, "code": self.error.code}}
        return out
