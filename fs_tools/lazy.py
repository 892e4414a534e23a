"""Names a package exports but imports on first use (PEP 562), so that importing the package, or one of
its light submodules, stays cheap: ``__getattr__ = lazy.exports(__name__, {"Name": "home.module"})``.
Standard library only, and not ``typing``: the hook command imports this first."""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs the hook command ~4 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``homes`` imported from its module when it is
    first asked for, then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
