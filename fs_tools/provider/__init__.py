"""The provider layer: the only code that touches the disk."""

from fs_tools.provider.content import TextFile, decode_text, version_of
from fs_tools.provider.files import CancelToken, FileProvider, Snapshot
from fs_tools.provider.resolve import Resolved, Resolver

__all__ = [
    "CancelToken",
    "FileProvider",
    "Resolved",
    "Resolver",
    "Snapshot",
    "TextFile",
    "decode_text",
    "version_of",
]
