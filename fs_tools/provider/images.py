"""Images as content facts for ``read`` (SPEC §18): which files are images (by their first bytes, never
their name), and the image a model is shown — the file itself when it fits the budgets, else scaled
down (Pillow) until it does. Pure: bytes in, bytes out; Pillow is imported when an image is shown.

Decoding is bounded before it starts: an image whose header declares more than ``MAX_DECODE_PIXELS``
is ``FS_TOO_LARGE`` without decoding a pixel (a decompression bomb: a few KB that would decode to
gigabytes), and a file that claims a format and cannot be decoded is ``FS_NOT_TEXT`` saying so.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from fs_tools.errors import NotText, TooLarge
from fs_tools.result import Media

DEFAULT_IMAGE_PIXELS = 1568  # the long side, in pixels
DEFAULT_IMAGE_BYTES = 5 << 20
MAX_SOURCE_BYTES = 64 << 20  # the largest image file read whole to be shown
MAX_DECODE_PIXELS = 50_000_000  # ~200 MB decoded as RGBA: a photo of 8,000 x 6,000 still passes

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
    """An image as shown: what the model gets, and the facts the text and the value state."""

    media: Media
    format: str  # the file's format (Pillow's name)
    width: int
    height: int
    shown_width: int
    shown_height: int
    frames: int

    @property
    def scaled(self) -> bool:
        return (self.shown_width, self.shown_height) != (self.width, self.height) or self.media.mime_type != (
            IMAGE_FORMATS[self.format][0]
        )


def show_image(data: bytes, display: str, announced: str, *, max_pixels: int, max_bytes: int) -> ShownImage:
    """The image in ``data`` (a file whose first bytes announced ``announced``) within ``max_pixels`` on
    its long side and ``max_bytes`` encoded: the file's own bytes when they fit, else scaled down."""
    from PIL import Image, UnidentifiedImageError

    words = f"a {IMAGE_FORMATS[announced][1]} image"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=[announced])
            width, height = image.size
            if width * height > MAX_DECODE_PIXELS:
                raise TooLarge(
                    f"{display!r} is {words} of {width:,}×{height:,} pixels, more than the {MAX_DECODE_PIXELS:,} "
                    "pixels fs-tools decodes",
                    details={"subject": "image", "width": width, "height": height},
                )
            frames = int(getattr(image, "n_frames", 1))
            image.load()  # the first frame, whole: a truncated or corrupt file fails here
            if max(width, height) <= max_pixels and len(data) <= max_bytes:
                media = Media(IMAGE_FORMATS[announced][0], data)
                return ShownImage(media, announced, width, height, width, height, frames)
            return _scaled(image, announced, width, height, frames, max_pixels=max_pixels, max_bytes=max_bytes)
    except TooLarge:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:  # the warning: made an error
        raise TooLarge(
            f"{display!r} is {words} too large to decode safely ({' '.join(str(exc).split())[:160]})",
            details={"subject": "image"},
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        # Pillow says SyntaxError for some broken headers; its "cannot identify" names an object's address
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        if isinstance(exc, UnidentifiedImageError):
            reason = "no image data follows its header"
        problem = NotText(
            f"{display!r} starts like {words} but cannot be decoded ({reason})",
            details={"appears": f"{words} that is truncated or corrupt", "family": "broken-image"},
        )
        raise problem from exc


def _scaled(
    image: object, announced: str, width: int, height: int, frames: int, *, max_pixels: int, max_bytes: int
) -> ShownImage:
    """The first frame, scaled to fit ``max_pixels`` and re-encoded until it fits ``max_bytes``: PNG when
    it has transparency (or was a PNG or GIF, whose flat colours JPEG blurs) and fits, else JPEG."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    frame = image.convert("RGBA" if alpha else "RGB")
    side = min(max_pixels, max(width, height))
    for _ in range(12):  # each turn shrinks the long side by a quarter: bounded
        shown = frame.copy()
        shown.thumbnail((side, side), Image.Resampling.LANCZOS)
        encoded, mime = _encode(shown, alpha=alpha, lossless=announced in ("PNG", "GIF"), max_bytes=max_bytes)
        if encoded is not None:
            return ShownImage(Media(mime, encoded), announced, width, height, shown.width, shown.height, frames)
        side = max(1, side * 3 // 4)
    raise TooLarge(
        f"the image cannot be made smaller than {max_bytes:,} bytes", details={"subject": "image", "budget": max_bytes}
    )


def _encode(image: object, *, alpha: bool, lossless: bool, max_bytes: int) -> tuple[bytes | None, str]:
    from PIL import Image

    assert isinstance(image, Image.Image)
    if alpha or lossless:
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=False)
        if out.tell() <= max_bytes or alpha:
            return (out.getvalue() if out.tell() <= max_bytes else None), "image/png"
    for quality in (85, 70, 50):
        out = io.BytesIO()
        image.convert("RGB").save(out, format="JPEG", quality=quality)
        if out.tell() <= max_bytes:
            return out.getvalue(), "image/jpeg"
    return None, "image/jpeg"
