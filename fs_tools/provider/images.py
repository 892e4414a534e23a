"""Images as content facts for ``read`` (SPEC §18): which files are images (by their first bytes, never
their name), and the image a model is shown — the file itself when it fits the budgets, else scaled
down (Pillow) until it does. Pure: bytes in, bytes out; Pillow is imported when an image is shown.

Decoding is bounded before it starts: an image whose header declares more than ``MAX_DECODE_PIXELS``
is ``FS_TOO_LARGE`` without decoding a pixel (a decompression bomb: a few KB that would decode to
gigabytes), and a file that claims a format and cannot be decoded is ``FS_NOT_TEXT`` saying so.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import Any

from fs_tools.errors import NotText, TooLarge
from fs_tools.result import Media

DEFAULT_IMAGE_PIXELS = 1568  # the long side, in pixels
DEFAULT_IMAGE_BYTES = 5 << 20
MAX_SOURCE_BYTES = 64 << 20  # the largest image file read whole to be shown
MAX_DECODE_PIXELS = 50_000_000  # a 7,000 x 7,000 RGBA PNG peaks at ~680 MB RSS while scaled; JPEGs far less

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


_PIL_ERRORS = (OSError, ValueError, SyntaxError, EOFError, struct.error, IndexError, KeyError, TypeError)


def show_image(data: bytes, display: str, announced: str, *, max_pixels: int, max_bytes: int) -> ShownImage:
    """The image in ``data`` (a file whose first bytes announced ``announced``) within ``max_pixels`` on
    its long side and ``max_bytes`` as base64: the file's own bytes when they fit, else its first frame
    scaled down and re-encoded until it does."""
    from PIL import Image, UnidentifiedImageError

    words = f"a {IMAGE_FORMATS[announced][1]} image"
    try:
        image = Image.open(io.BytesIO(data), formats=[announced])
        width, height = image.size
        if width * height > MAX_DECODE_PIXELS:
            raise TooLarge(
                f"{display!r} is {words} of {width:,}×{height:,} pixels, more than the {MAX_DECODE_PIXELS:,} "
                "pixels fs-tools decodes",
                details={"subject": "image", "width": width, "height": height},
            )
        turned = _orientation(image) in (5, 6, 7, 8)  # shown rotated a quarter turn
        upright = (height, width) if turned else (width, height)
        animated = bool(getattr(image, "is_animated", False))  # looks for a second frame only, never counts
        if max(width, height) <= max_pixels and encoded_size(len(data)) <= max_bytes:
            image.load()  # the first frame, whole: a truncated or corrupt file fails here
            media = Media(IMAGE_FORMATS[announced][0], data)
            return ShownImage(media, announced, *upright, *upright, animated)
        if announced == "JPEG":  # decode at a reduced scale where the format allows: less memory, less time
            image.draft("RGB", (max_pixels, max_pixels))
        image.load()
        return _scaled(image, display, announced, upright, animated, max_pixels=max_pixels, max_bytes=max_bytes)
    except TooLarge:
        raise
    except Image.DecompressionBombError as exc:
        raise TooLarge(
            f"{display!r} is {words} too large to decode safely ({' '.join(str(exc).split())[:160]})",
            details={"subject": "image"},
        ) from exc
    except (UnidentifiedImageError, *_PIL_ERRORS) as exc:
        # Pillow says SyntaxError for some broken headers, struct.error or IndexError for a cut GIF; its
        # "cannot identify" names an object's address, which a message must not carry
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        if isinstance(exc, UnidentifiedImageError):
            reason = "no image data follows its header"
        problem = NotText(
            f"{display!r} starts like {words} but cannot be decoded ({reason})",
            details={"appears": f"{words} that is truncated or corrupt", "family": "broken-image"},
        )
        raise problem from exc


def _orientation(image: object) -> int:
    try:
        return int(image.getexif().get(0x0112, 1))  # type: ignore[attr-defined]
    except _PIL_ERRORS:
        return 1


def _scaled(
    image: object,
    display: str,
    announced: str,
    upright: tuple[int, int],
    animated: bool,
    *,
    max_pixels: int,
    max_bytes: int,
) -> ShownImage:
    """The first frame, upright, scaled once to fit ``max_pixels``, then re-encoded (and shrunk by a
    quarter at a time) until it fits ``max_bytes``: PNG when it has transparency (or was a PNG or GIF,
    whose flat colours JPEG blurs) and fits, else JPEG (transparency flattened onto white)."""
    from PIL import Image, ImageOps

    assert isinstance(image, Image.Image)
    alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    image = ImageOps.exif_transpose(image) or image
    if image.mode in ("P", "1"):  # a palette is resized pixel by pixel: give it its colours first
        image = image.convert("RGBA" if alpha else "RGB")
    image.thumbnail((max_pixels, max_pixels), Image.Resampling.LANCZOS)  # in place: one small copy from here
    small = _eight_bit(image).convert("RGBA" if alpha else "RGB")
    side = max(small.size)
    while True:
        shown = small if side == max(small.size) else small.copy()
        if shown is not small:
            shown.thumbnail((side, side), Image.Resampling.LANCZOS)
        encoded, mime = _encode(shown, alpha=alpha, lossless=announced in ("PNG", "GIF"), max_bytes=max_bytes)
        if encoded is not None:
            return ShownImage(Media(mime, encoded), announced, *upright, shown.width, shown.height, animated)
        if side == 1:
            raise TooLarge(
                f"{display!r} cannot be shown within {max_bytes:,} bytes, even at 1 pixel",
                details={"subject": "image", "budget": max_bytes},
            )
        side = max(1, side * 3 // 4)


def _eight_bit(image: Any) -> Any:
    """A 16-bit or floating-point image stretched to 8 bits over its own range (a plain conversion clips
    everything above 255 to white)."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    if image.mode not in ("I", "F") and not image.mode.startswith("I;16"):
        return image
    floats = image.convert("F")
    extrema: Any = floats.getextrema()  # (low, high) for a one-band image
    low, high = float(extrema[0]), float(extrema[1])
    scale = 255.0 / (high - low) if high > low else 1.0
    return floats.point(lambda value: (value - low) * scale).convert("L")


def _encode(image: object, *, alpha: bool, lossless: bool, max_bytes: int) -> tuple[bytes | None, str]:
    from PIL import Image

    assert isinstance(image, Image.Image)
    if alpha or lossless:
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=False)
        if encoded_size(out.tell()) <= max_bytes:
            return out.getvalue(), "image/png"
    flat = image
    if alpha:  # JPEG has no transparency: flatten onto white rather than fail to show it
        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.getchannel("A"))
    for quality in (85, 70, 50):
        out = io.BytesIO()
        flat.convert("RGB").save(out, format="JPEG", quality=quality)
        if encoded_size(out.tell()) <= max_bytes:
            return out.getvalue(), "image/jpeg"
    return None, "image/jpeg"
