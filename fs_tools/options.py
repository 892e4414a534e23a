"""What the host chose for the tools of a workspace, as one typed value: the workspace makes it once
(every option checked there, a one-line ``ValueError`` naming a bad one) and each tool reads it as
``ctx.options``. The provider's limits (file sizes, lock timeout, durability) are the provider's, and
the stores' (location, keys, history budget) the store's: they are given where those are made."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fs_tools.provider import DEFAULT_IMAGE_BYTES, DEFAULT_IMAGE_PIXELS
from policy import ProtectedPaths

STALE_MODES = ("strict", "region")


@dataclass(frozen=True)
class Options:
    read_only: bool = False  # every change is refused, and no tool that changes files is offered
    protected: ProtectedPaths = field(default_factory=lambda: ProtectedPaths(()))  # paths no change may touch
    search_seconds: float = 10.0  # the time budget of glob and grep ...
    clock: Callable[[], float] = time.monotonic  # ... measured on this clock (a simulation may give its own)
    check_placeholders: bool = True  # refuse omission placeholders written over code (SPEC §15)
    check_syntax: bool = True  # report the syntax errors a change introduces (SPEC §15) ...
    refuse_syntax_errors: bool = False  # ... and refuse the change instead (checks them too)
    stale: str = "strict"  # "region": an edit of lines that did not change since the read goes through
    max_image_pixels: int = DEFAULT_IMAGE_PIXELS  # an image read is shown within this long side ... (SPEC §18)
    max_image_bytes: int = DEFAULT_IMAGE_BYTES  # ... and this many encoded bytes
    max_pdf_pages: int = 20  # a PDF read without pages shows at most this many

    def __post_init__(self) -> None:
        for option, budget, least in (
            ("max_image_pixels", self.max_image_pixels, 16),
            ("max_image_bytes", self.max_image_bytes, 1024),
            ("max_pdf_pages", self.max_pdf_pages, 1),
        ):
            if not isinstance(budget, int) or isinstance(budget, bool) or budget < least:
                raise ValueError(f"Workspace({option}=...) must be an integer of at least {least}, got {budget!r}")
        if self.stale not in STALE_MODES:
            raise ValueError(f'Workspace(stale=...) must be "strict" or "region", got {self.stale!r}')
        if self.refuse_syntax_errors and not self.check_syntax:
            object.__setattr__(self, "check_syntax", True)  # refusing them means finding them
