"""The image reader of the bounded child (``worker.py`` runs it; imports nothing of fs-tools): Pillow
decodes and scales the image there, because a crafted file can keep it decoding for minutes (a 620 KB
progressive JPEG whose last scan is repeated 40,000 times: each scan is a pass over the whole image) and
a large photo needs hundreds of MB decoded, neither of which Pillow bounds.

Protocol, after the image's bytes: the parent sends ``{"format", "max_pixels", "max_raw", "as_is",
"max_scans", "max_decoded"}``; the reader answers one line: ``{"shown": {...}}`` (``data`` is the
base64 of the shown image, or null for the file's own bytes), ``{"broken": reason}``, ``{"large":
what, ...facts}`` for a bound it refused to pass, or ``{"limit": "memory"}`` when a decoder failed with
what the image needs past the address space left.
"""

from __future__ import annotations

import base64
import io
import re
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

_PIL_ERRORS = (OSError, ValueError, SyntaxError, EOFError, struct.error, IndexError, KeyError, TypeError)

# What ends a scan's entropy-coded data: a marker, i.e. 0xFF followed by neither a stuffed zero nor a
# restart marker (RST0-7 sit inside a scan's data)
_SCAN_END = re.compile(rb"\xff[^\x00\xd0-\xd7]")
# The next marker as libjpeg finds one between segments: it skips any other byte, then fill bytes (0xFF)
_MARKER = re.compile(rb"\xff+[^\x00\xff]")
_NO_LENGTH = frozenset((0x01, 0xD8, *range(0xD0, 0xD8)))  # TEM, SOI, RST0-7: markers without a segment


class ScanWalk(NamedTuple):
    """What walking a JPEG's segments found: its scans, counted no further than the limit, and whether the
    walk reached the image's end (its EOI, or the end of the data inside a scan) over nothing but
    well-formed segments — only then is the count the number of passes the decoder makes."""

    scans: int
    complete: bool


def jpeg_scans(data: bytes, limit: int) -> ScanWalk:
    """The scans (SOS segments) of the JPEG in ``data``, counting no further than ``limit + 1``. Each
    segment is skipped by its length (an EXIF thumbnail's scans are inside one and not counted) and each
    scan's data by a search in C. Bytes between segments that are not a marker are skipped as libjpeg
    skips them (its "extraneous bytes"), and counting goes on, but the walk is no longer complete; nor is
    it past ``64 * limit`` segments (a real JPEG has a few dozen), a cut segment, or the limit."""
    scans = segments = 0
    at, clean = 2, True  # after SOI
    while scans <= limit and segments <= 64 * limit:
        found = _MARKER.search(data, at)
        if found is None:
            return ScanWalk(scans, False)  # cut between segments
        clean = clean and found.start() == at
        at = found.end() - 2
        marker = data[at + 1]
        if marker == 0xD9:  # EOI
            return ScanWalk(scans, clean)
        segments += 1
        if marker in _NO_LENGTH:
            at += 2
            continue
        if at + 4 > len(data):
            return ScanWalk(scans, False)  # cut in a segment's length
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
        if at > len(data):
            return ScanWalk(scans, False)  # a segment cut short
        if marker == 0xDA:
            scans += 1
            end = _SCAN_END.search(data, at)
            if end is None:
                return ScanWalk(scans, clean)  # the data ends inside this scan's: no scan can follow
            at = end.start()
    return ScanWalk(scans, False)


def serve(data: bytes, say: Callable[[dict[str, object]], None], listen: Callable[[], dict[str, object]]) -> None:
    """Show the image in ``data`` as the parent asks (``listen``), answering with ``say``."""
    asked: dict[str, Any] = listen()
    say(shown(data, asked))


def shown(data: bytes, asked: dict[str, Any]) -> dict[str, object]:
    """The answer for the image in ``data``. With ``asked["small"]`` (``{"pixels", "scans"}``), only an
    image shown as it is, of no more pixels (and a JPEG of no more scans), is decoded: any other answers
    ``{"elsewhere": true}`` before a pixel is decoded — the parent decodes those in the child."""
    from PIL import Image, UnidentifiedImageError

    small: dict[str, int] | None = asked.get("small")
    announced, max_pixels = str(asked["format"]), int(asked["max_pixels"])
    need = 0
    try:
        if announced == "JPEG":
            walk = jpeg_scans(data, int(asked["max_scans"]))
            if walk.scans > int(asked["max_scans"]):
                return {"large": "scans", "scans": walk.scans}
            if small is not None and not (walk.complete and walk.scans <= small["scans"]):
                return {"elsewhere": True}  # more passes than a small image's, or passes the walk cannot vouch for
        image = Image.open(io.BytesIO(data), formats=[announced])
        width, height = image.size
        as_is = bool(asked["as_is"]) and max(width, height) <= max_pixels
        if small is not None and not (as_is and width * height <= small["pixels"]):
            return {"elsewhere": True}
        coefficients = _coefficient_bytes(image)
        if not as_is and announced == "JPEG":  # decode at a reduced scale where the format allows
            image.draft("RGB", _fitted((width, height), max_pixels))
        need = _decoded_bytes(image) + coefficients
        if need > int(asked["max_decoded"]):  # before anything below: a PNG's EXIF may load the whole image
            return {"large": "memory", "need": need, "width": width, "height": height}
        turned = _orientation(image) in (5, 6, 7, 8)  # shown rotated a quarter turn
        upright = (height, width) if turned else (width, height)
        facts: dict[str, object] = {"width": upright[0], "height": upright[1]}
        facts["animated"] = bool(getattr(image, "is_animated", False))  # looks for a second frame, never counts
        image.load()  # the first frame, whole: a truncated or corrupt file fails here
        if as_is:
            return {"shown": {**facts, "shown_width": upright[0], "shown_height": upright[1], "data": None}}
        return _scaled(image, facts, lossless=announced in ("PNG", "GIF"), max_pixels=max_pixels, asked=asked)
    except Image.DecompressionBombError as exc:
        return {"large": "bomb", "reason": " ".join(str(exc).split())[:160]}
    except MemoryError:
        raise
    except (UnidentifiedImageError, *_PIL_ERRORS) as exc:
        if need and _past_the_address_space(need):
            return {"limit": "memory"}  # libjpeg out of memory is Pillow's "broken data stream"
        # Pillow says SyntaxError for some broken headers, struct.error or IndexError for a cut GIF; its
        # "cannot identify" names an object's address, which a message must not carry
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        if isinstance(exc, UnidentifiedImageError):
            reason = "no image data follows its header"
        return {"broken": reason}


def _past_the_address_space(need: int) -> bool:
    """Whether decoding what takes ``need`` bytes cannot fit in this process's address space limit (the
    child's; none in the server's): a decoder that fails then ran out of memory, whatever it says."""
    import resource

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    try:
        with open("/proc/self/statm", "rb") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return False
    return used + need > limit


def _fitted(size: tuple[int, int], side: int) -> tuple[int, int]:
    """``size`` scaled to fit ``side`` on its long side, as ``thumbnail`` will: what ``draft`` may decode
    down to (asking for a square would keep twice the pixels of a 3:2 photo)."""
    width, height = size
    if max(width, height) <= side:
        return size
    if width >= height:
        return side, max(1, -(-height * side // width))
    return max(1, -(-width * side // height)), side


def _decoded_bytes(image: Any) -> int:
    """What decoding ``image`` and scaling it take at most: Pillow keeps 1 byte a pixel for 1, L and P,
    2 for 16-bit grey and 4 for the rest (RGB included); a palette is given its colours (4 bytes more)
    before it is scaled, and an image with transparency is scaled premultiplied (a full-size copy)."""
    mode = image.mode
    size = 1 if mode in ("1", "L", "P") else 2 if mode.startswith("I;16") else 4
    alpha = _has_alpha(image)
    if mode == "P":
        size += 4
    if mode.startswith("I;16"):
        size += 4  # stretched to 8 bits through floats
    return int(image.width * image.height * (size + 4 if alpha else size))


def _has_alpha(image: Any) -> bool:
    """Whether ``image`` has transparency: an alpha band, or a palette with a transparent colour."""
    return image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)


def _coefficient_bytes(image: Any) -> int:
    """What a progressive JPEG's decoder keeps besides the pixels, however small the draft: every DCT
    coefficient of the whole image, 2 bytes each, per component (subsampling ignored: an upper bound)."""
    if image.format != "JPEG" or not image.info.get("progressive"):
        return 0
    return int(image.width * image.height * 2 * len(image.getbands()))


def _orientation(image: Any) -> int:
    try:
        return int(image.getexif().get(0x0112, 1))
    except _PIL_ERRORS:
        return 1


def _scaled(
    image: Any, facts: dict[str, object], *, lossless: bool, max_pixels: int, asked: dict[str, Any]
) -> dict[str, object]:
    """The first frame scaled once to fit ``max_pixels``, then turned upright (scaling first: turning
    a full-size image copies it), re-encoded (and shrunk by a quarter at a time) until it fits
    ``max_raw`` bytes: PNG when it has transparency (or was a PNG or GIF, whose flat colours JPEG
    blurs) and fits, else JPEG (transparency flattened onto white)."""
    from PIL import Image, ImageOps

    alpha = _has_alpha(image)
    if image.mode in ("P", "1"):  # a palette is resized pixel by pixel: give it its colours first
        image = image.convert("RGBA" if alpha else "RGB")
    image.thumbnail((max_pixels, max_pixels), Image.Resampling.LANCZOS)  # in place: one small copy from here
    image = ImageOps.exif_transpose(image) or image
    small = _eight_bit(image).convert("RGBA" if alpha else "RGB")
    side = max(small.size)
    max_raw = int(asked["max_raw"])
    while True:
        shown = small if side == max(small.size) else small.copy()
        if shown is not small:
            shown.thumbnail((side, side), Image.Resampling.LANCZOS)
        encoded, mime = _encode(shown, alpha=alpha, lossless=lossless, max_raw=max_raw)
        if encoded is not None:
            data = base64.b64encode(encoded).decode("ascii")
            return {
                "shown": {**facts, "shown_width": shown.width, "shown_height": shown.height, "mime": mime, "data": data}
            }
        if side == 1:
            return {"large": "budget"}
        side = max(1, side * 3 // 4)


def _eight_bit(image: Any) -> Any:
    """A 16-bit or floating-point image stretched to 8 bits over its own range (a plain conversion clips
    everything above 255 to white)."""
    if image.mode not in ("I", "F") and not image.mode.startswith("I;16"):
        return image
    floats = image.convert("F")
    extrema: Any = floats.getextrema()  # (low, high) for a one-band image
    low, high = float(extrema[0]), float(extrema[1])
    scale = 255.0 / (high - low) if high > low else 1.0
    return floats.point(lambda value: (value - low) * scale).convert("L")


def _encode(image: Any, *, alpha: bool, lossless: bool, max_raw: int) -> tuple[bytes | None, str]:
    from PIL import Image

    if alpha or lossless:
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=False)
        if out.tell() <= max_raw:
            return out.getvalue(), "image/png"
    flat = image
    if alpha:  # JPEG has no transparency: flatten onto white rather than fail to show it
        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.getchannel("A"))
    for quality in (85, 70, 50):
        out = io.BytesIO()
        flat.convert("RGB").save(out, format="JPEG", quality=quality)
        if out.tell() <= max_raw:
            return out.getvalue(), "image/jpeg"
    return None, "image/jpeg"
