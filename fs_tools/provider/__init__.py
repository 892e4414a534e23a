"""The provider layer: the only code that touches the disk. Its public face is this package: the
``Provider`` protocol, ``FileProvider`` (the real one) and the values they hand out."""

from fs_tools.provider.cache import VersionCache
from fs_tools.provider.content import TextDecoder, TextFile, changed_span, count_lines, decode_text, version_of
from fs_tools.provider.face import (
    CancelToken,
    Enter,
    FileState,
    Gate,
    Provider,
    ProviderListener,
    ReadChild,
    Scan,
    Sink,
    Snapshot,
    Walk,
)
from fs_tools.provider.files import FileProvider
from fs_tools.provider.images import (
    DEFAULT_IMAGE_BYTES,
    DEFAULT_IMAGE_PIXELS,
    IMAGE_FORMATS,
    MAX_SOURCE_BYTES,
    ShownImage,
    encoded_size,
    image_format,
    show_image,
)
from fs_tools.provider.locks import DEFAULT_LOCK_SECONDS
from fs_tools.provider.notebooks import (
    CELL_TYPES,
    NOTEBOOK_HEAD,
    NOTEBOOK_MAX_BYTES,
    Notebook,
    change_type,
    may_be_notebook,
    notebook_or_refuse,
    parse_notebook,
    set_source,
    source_of,
)
from fs_tools.provider.pdfs import PdfPages, is_pdf, read_pdf
from fs_tools.provider.primitives import Primitives
from fs_tools.provider.walk import DIRECTORY, FILE, OTHER, SYMLINK, Entry

__all__ = [
    "CELL_TYPES",
    "DEFAULT_IMAGE_BYTES",
    "DEFAULT_IMAGE_PIXELS",
    "DEFAULT_LOCK_SECONDS",
    "DIRECTORY",
    "FILE",
    "IMAGE_FORMATS",
    "MAX_SOURCE_BYTES",
    "NOTEBOOK_HEAD",
    "NOTEBOOK_MAX_BYTES",
    "OTHER",
    "SYMLINK",
    "CancelToken",
    "Enter",
    "Entry",
    "FileProvider",
    "FileState",
    "Gate",
    "Notebook",
    "PdfPages",
    "Primitives",
    "Provider",
    "ProviderListener",
    "ReadChild",
    "Scan",
    "ShownImage",
    "Sink",
    "Snapshot",
    "TextDecoder",
    "TextFile",
    "VersionCache",
    "Walk",
    "change_type",
    "changed_span",
    "count_lines",
    "decode_text",
    "encoded_size",
    "image_format",
    "is_pdf",
    "may_be_notebook",
    "notebook_or_refuse",
    "parse_notebook",
    "read_pdf",
    "set_source",
    "show_image",
    "source_of",
    "version_of",
]
