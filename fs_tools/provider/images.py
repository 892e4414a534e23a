"""Images as content facts for ``read`` (SPEC §18): which files are images (by their first bytes, never
their name), and the image a model is shown — the file itself when it fits the budgets, else scaled
down until it does.

Pillow decodes in the bounded child process PDFs use (``child.py``; ``image_worker.py`` is its reader:
1 GiB of address space, 20 s of CPU, 40 s of wall time, killed when the call is cancelled): a crafted
620 KB JPEG kept it decoding for minutes in the server's own process, and a photo needs hundreds of MB
decoded. Only an image small enough to be shown as it is, whose decoding is known to be short
(``SMALL_BYTES``, ``SMALL_PIXELS``, ``SMALL_JPEG_SCANS``), is decoded here, sparing it the child's start. Bounded before
decoding too: a JPEG of more than ``MAX_JPEG_SCANS`` scans, and an image whose decoding and scaling (and
a progressive JPEG's coefficients) would take more than ``MAX_DECODED_BYTES``, are ``FS_TOO_LARGE``
without decoding a pixel; so are images past Pillow's own decompression-bomb limit. A JPEG is decoded
at a reduced scale when it is to be shown smaller (a 54-megapixel photo at a quarter), so the pixel
count alone refuses nothing. A file that claims a format and cannot be decoded is ``FS_NOT_TEXT``.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from fs_tools.errors import ImageTooLarge, NotText, TooLarge
from fs_tools.provider import image_worker
from fs_tools.provider.child import Bounds, Child
from fs_tools.provider.face import CancelToken
from fs_tools.result import Media

DEFAULT_IMAGE_PIXELS = 1568  # the long side, in pixels
DEFAULT_IMAGE_BYTES = 5 << 20
MAX_SOURCE_BYTES = 64 << 20  # the largest image file read whole to be shown
IMAGE_MEMORY_BYTES = 1 << 30  # the child's address space
IMAGE_CPU_SECONDS = 20
IMAGE_WALL_SECONDS = 40
# what decoding and scaling may take (``image_worker._decoded_bytes``): 167 megapixels of RGB (Pillow keeps a
# pixel in 4 bytes), 83 of RGBA (scaled premultiplied: a second copy); the child's 1 GiB holds it
MAX_DECODED_BYTES = 640 << 20
MAX_JPEG_SCANS = 256  # libjpeg's default progressive script writes 10; nvImageCodec refuses past 256 too
# An image shown as it is, of at most this many bytes and pixels, and a JPEG of at most this many scans
# (its walk complete), is decoded in this process: starting the child costs 60-250 ms. The bytes bound
# the work Pillow does in Python, a chunk, a segment or an extension at a time (a PNG of 3.7 MB of empty
# chunks took 2.3 s; of 512 KiB, 0.3 s); the pixels and scans bound the decoding (16 passes over 4 MP at
# most). Screenshots are 90-270 KB (1300x900 to 3024x1608 PNGs); everything else goes to the child
SMALL_BYTES = 512 << 10
SMALL_PIXELS = 2048 * 2048
SMALL_JPEG_SCANS = 16

# format name (Pillow's) -> (MIME type, how the text names it)
IMAGE_FORMATS = {
    "PNG": ("image/png", "PNG"),
    "JPEG": ("image/jpeg", "JPEG"),
    "GIF": ("image/gif", "GIF"),
    "WEBP": ("image/webp", "WebP"),
}


def image_format(head: bytes) -> str | None:
    """The image format a file's first bytes announce (PNG, JPEG, GIF, WEBP), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


@dataclass(frozen=True)
class ShownImage:
    """An image as shown: what the model gets, and the facts the text and the value state. ``width`` and
    ``height`` are as the image is meant to be seen (its EXIF orientation applied)."""

    media: Media
    format: str  # the file's format (Pillow's name)
    width: int
    height: int
    shown_width: int
    shown_height: int
    animated: bool

    @property
    def resized(self) -> bool:
        return (self.shown_width, self.shown_height) != (self.width, self.height)

    @property
    def converted(self) -> bool:
        """Not the file's own bytes: scaled, re-encoded or turned upright."""
        return self.resized or self.media.mime_type != IMAGE_FORMATS[self.format][0]


def encoded_size(size: int) -> int:
    """What ``size`` bytes take as base64, the form every surface sends an image in (and the one the
    byte budget bounds: Anthropic's 5 MB limit is on the base64 text)."""
    return 4 * ((size + 2) // 3)


def show_image(
    data: bytes,
    display: str,
    announced: str,
    *,
    max_pixels: int,
    max_bytes: int,
    cancel: CancelToken | None = None,
) -> ShownImage:
    """The image in ``data`` (a file whose first bytes announced ``announced``) within ``max_pixels`` on
    its long side and ``max_bytes`` as base64: the file's own bytes when they fit, else its first frame
    scaled down and re-encoded until it does."""
    words = f"a {IMAGE_FORMATS[announced][1]} image"
    bounds = Bounds(
        IMAGE_MEMORY_BYTES,
        IMAGE_CPU_SECONDS,
        IMAGE_WALL_SECONDS,
        subject="image",
        kind="image",
        article="an",
        condition=ImageTooLarge,
    )
    asked = {
        "format": announced,
        "max_pixels": max_pixels,
        "max_raw": 3 * (max_bytes // 4),  # the most bytes whose base64 fits max_bytes
        "as_is": encoded_size(len(data)) <= max_bytes,
        "max_scans": MAX_JPEG_SCANS,
        "max_decoded": MAX_DECODED_BYTES,
    }
    answer: dict[str, object] = {"elsewhere": True}
    if asked["as_is"] and len(data) <= SMALL_BYTES:  # shown as it is: decoded here when the work is known small
        answer = image_worker.shown(data, {**asked, "small": {"pixels": SMALL_PIXELS, "scans": SMALL_JPEG_SCANS}})
    if answer.get("elsewhere"):
        with Child("image", data, bounds, display, cancel) as child:
            child.tell(asked, last=True)
            answer = child.answer()
    shown = answer.get("shown")
    if isinstance(shown, dict):
        if shown["data"] is None:
            media = Media(IMAGE_FORMATS[announced][0], data)
        else:
            media = Media(str(shown["mime"]), base64.b64decode(str(shown["data"])))
        width, height, shown_width, shown_height = (int(shown[key]) for key in _SIZES)
        return ShownImage(media, announced, width, height, shown_width, shown_height, bool(shown["animated"]))
    if "broken" in answer:
        raise NotText(
            f"{display!r} starts like {words} but cannot be decoded ({answer['broken']})",
            appears=f"{words} that is truncated or corrupt",
            family="broken-image",
        )
    raise _too_large(answer, display, words, max_bytes)


_SIZES = ("width", "height", "shown_width", "shown_height")


def _too_large(answer: dict[str, object], display: str, words: str, max_bytes: int) -> TooLarge:
    """The bound the reader refused to pass, as the error a model reads."""
    large = answer.get("large")
    if large == "scans":
        return ImageTooLarge(
            f"{display!r} is a JPEG of more than {MAX_JPEG_SCANS} scans (encoders write at most about 10, and "
            "each is one more pass over the whole image): fs-tools does not decode it",
            details={"subject": "image", "scans": answer["scans"], "limit": MAX_JPEG_SCANS},
        )
    if large == "memory":
        need, width, height = (int(str(answer[key])) for key in ("need", "width", "height"))
        return ImageTooLarge(
            f"{display!r} is {words} of {width:,}×{height:,} pixels, which would take {need >> 20:,} MiB to decode "
            f"and scale, more than the {MAX_DECODED_BYTES >> 20:,} MiB fs-tools gives an image",
            details={"subject": "image", "width": width, "height": height, "need": need, "limit": MAX_DECODED_BYTES},
        )
    if large == "bomb":
        return ImageTooLarge(
            f"{display!r} is {words} too large to decode safely ({answer['reason']})", details={"subject": "image"}
        )
    if large == "budget":
        return ImageTooLarge(
            f"{display!r} cannot be shown within {max_bytes:,} bytes, even at 1 pixel",
            details={"subject": "image", "budget": max_bytes},
        )
    return ImageTooLarge(  # an answer this version of the reader never gives: refused rather than guessed at
        f"{display!r} could not be decoded within fs-tools' bounds for an image", details={"subject": "image"}
    )
