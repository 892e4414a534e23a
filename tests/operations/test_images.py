"""Reading images (SPEC §18): shown as images, scaled within the workspace's budgets, decided by content,
recorded like any read; bombs and broken files are structured errors; MCP and the Anthropic and OpenAI
adapters carry the image."""

from __future__ import annotations

import base64
import io
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from fs_tools import Session, Workspace
from fs_tools.errors import TooLarge
from fs_tools.result import ToolResult


def image_bytes(size: tuple[int, int], fmt: str, mode: str = "RGB", *, noise: bool = False, **options: Any) -> bytes:
    image = Image.frombytes(mode, size, os.urandom(size[0] * size[1] * len(mode))) if noise else None
    if image is None:
        image = Image.new(mode, size, (200, 30, 30, 128)[: len(mode)] if len(mode) > 1 else 128)
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


def shown(result: ToolResult) -> Image.Image:
    assert not result.is_error, result.text
    assert len(result.media) == 1
    return Image.open(io.BytesIO(result.media[0].data))


def test_a_small_png_comes_back_as_it_is_and_its_read_is_recorded(root: Path, session: Session) -> None:
    data = image_bytes((40, 30), "PNG")
    (root / "logo.png").write_bytes(data)
    result = session.call("read", {"file_path": "logo.png"})
    assert result.media[0].mime_type == "image/png" and result.media[0].data == data
    assert result.text == f"'logo.png': PNG image, 40×30 pixels ({len(data)} bytes)"
    assert result.value["kind"] == "image" and result.value["format"] == "png"
    assert (result.value["width"], result.value["height"]) == (40, 30)
    assert (result.value["shown_width"], result.value["shown_height"]) == (40, 30)
    assert result.value["version"] is not None
    # the read counts as an observation: the session may now replace the file
    assert not session.call("write", {"file_path": "logo.png", "content": "now text\n"}).is_error


def test_the_kind_is_decided_by_content_not_by_name(root: Path, session: Session) -> None:
    (root / "notes.txt").write_bytes(image_bytes((8, 8), "GIF"))
    (root / "picture.png").write_text("plain text\n")
    assert session.call("read", {"file_path": "notes.txt"}).value["kind"] == "image"
    text = session.call("read", {"file_path": "picture.png"})
    assert text.value["kind"] == "text" and "plain text" in text.text and text.media == ()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_every_supported_format_is_shown(root: Path, session: Session, fmt: str) -> None:
    (root / "f.img").write_bytes(image_bytes((20, 10), fmt))
    result = session.call("read", {"file_path": "f.img"})
    assert shown(result).size == (20, 10)
    assert result.media[0].mime_type == f"image/{fmt.lower()}"
    assert result.value["format"] == fmt.lower()


def test_a_large_image_is_scaled_to_the_long_side_budget(root: Path) -> None:
    (root / "photo.jpg").write_bytes(image_bytes((3000, 2000), "JPEG"))
    with Workspace(root, max_image_pixels=600) as ws:
        result = ws.session("s").call("read", {"file_path": "photo.jpg"})
    assert shown(result).size == (600, 400)
    assert (result.value["width"], result.value["shown_width"]) == (3000, 600)
    assert "3,000×2,000 pixels; shown scaled to 600×400 (JPEG" in result.text


def test_an_image_over_the_byte_budget_is_made_to_fit(root: Path) -> None:
    (root / "noise.png").write_bytes(image_bytes((500, 500), "PNG", noise=True))  # ~750 KB, incompressible
    with Workspace(root, max_image_bytes=60_000) as ws:
        result = ws.session("s").call("read", {"file_path": "noise.png"})
    assert len(result.media[0].data) <= 60_000
    assert max(shown(result).size) <= 500 and "shown scaled to" in result.text


def test_transparency_survives_scaling(root: Path) -> None:
    (root / "icon.png").write_bytes(image_bytes((800, 800), "PNG", "RGBA"))
    with Workspace(root, max_image_pixels=100) as ws:
        result = ws.session("s").call("read", {"file_path": "icon.png"})
    image = shown(result)
    assert result.media[0].mime_type == "image/png" and image.mode == "RGBA" and image.size == (100, 100)


def test_an_animated_gif_says_so_and_which_frame_is_shown_when_scaled(root: Path) -> None:
    frames = [Image.new("RGB", (400, 400), colour) for colour in ("red", "green", "blue")]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    (root / "spin.gif").write_bytes(out.getvalue())
    with Workspace(root) as ws:
        whole = ws.session("s").call("read", {"file_path": "spin.gif"})
    with Workspace(root, max_image_pixels=100) as ws:
        scaled = ws.session("s").call("read", {"file_path": "spin.gif"})
    assert ", animated (" in whole.text and "first frame" not in whole.text  # the file itself: all frames
    assert whole.media[0].data == out.getvalue()
    assert "animated (its first frame is shown)" in scaled.text and shown(scaled).size == (100, 100)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_declaring(width: int, height: int) -> bytes:
    """A valid-looking PNG of a few hundred bytes whose header declares ``width`` x ``height`` pixels."""
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", zlib.compress(bytes(1000))) + _chunk(b"IEND", b"")


@pytest.mark.parametrize("side", [20_000, 100_000])  # past Pillow's bomb error (our memory budget: below)
def test_a_decompression_bomb_is_too_large_before_a_pixel_is_decoded(root: Path, session: Session, side: int) -> None:
    (root / "bomb.png").write_bytes(_png_declaring(side, side))
    result = session.call("read", {"file_path": "bomb.png"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert "bomb.png" in result.text and "ask the user" in result.text


def test_a_truncated_image_is_not_text_saying_so(root: Path, session: Session) -> None:
    data = image_bytes((50, 50), "PNG", noise=True)
    (root / "cut.png").write_bytes(data[: len(data) // 2])
    result = session.call("read", {"file_path": "cut.png"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert "starts like a PNG image but cannot be decoded" in result.text and "good copy" in result.text


@pytest.mark.parametrize("option", ["max_image_pixels", "max_image_bytes"])
@pytest.mark.parametrize("bad", [0, -1, True, "100", 1.5])
def test_image_budgets_are_checked(root: Path, option: str, bad: object) -> None:
    with pytest.raises(ValueError, match=option):
        Workspace(root, **{option: bad})  # type: ignore[arg-type]


def test_read_many_shows_images_within_one_images_budget(root: Path) -> None:
    for name in ("a.png", "b.png"):
        (root / name).write_bytes(image_bytes((120, 120), "PNG", noise=True))  # ~43 KB each
    (root / "c.txt").write_text("text\n")
    with Workspace(root, max_image_bytes=60_000) as ws:
        result = ws.session("s").call("read_many", {"file_paths": ["a.png", "b.png", "c.txt"]})
    assert not result.is_error and len(result.media) == 1
    assert "the image is not shown here" in result.text and "text" in result.text


# --- what each surface carries ----------------------------------------------------------------------------


@pytest.fixture
def image_result(root: Path, session: Session) -> ToolResult:
    (root / "logo.png").write_bytes(image_bytes((16, 16), "PNG"))
    return session.call("read", {"file_path": "logo.png"})


def test_the_mcp_result_carries_image_content(image_result: ToolResult) -> None:
    from fs_tools.mcp.shapes import call_result

    content = call_result(image_result)["content"]
    assert [part["type"] for part in content] == ["text", "image"]
    assert content[1]["mimeType"] == "image/png" and base64.b64decode(content[1]["data"]) == image_result.media[0].data
    pytest.importorskip("mcp")
    from fs_tools.mcp.server import to_call_result

    assert to_call_result(image_result).content[1].type == "image"


def test_the_anthropic_tool_result_has_an_image_block(root: Path, session: Session) -> None:
    from fs_tools.adapters.anthropic import tool_result

    (root / "logo.png").write_bytes(image_bytes((16, 16), "PNG"))
    block = tool_result(session, {"type": "tool_use", "id": "t1", "name": "read", "input": {"file_path": "logo.png"}})
    text, image = block["content"]
    assert text["type"] == "text" and "PNG image" in text["text"]
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"


def test_the_openai_answers_carry_the_image_where_the_api_can(root: Path, session: Session) -> None:
    from fs_tools.adapters.openai import answer_tool_call, call_tool, image_message

    (root / "logo.png").write_bytes(image_bytes((16, 16), "PNG"))
    arguments = '{"file_path": "logo.png"}'
    responses = answer_tool_call(
        session, {"type": "function_call", "call_id": "c1", "name": "read", "arguments": arguments}
    )
    assert [part["type"] for part in responses["output"]] == ["input_text", "input_image"]
    assert responses["output"][1]["image_url"].startswith("data:image/png;base64,")
    chat_call = {"id": "c2", "type": "function", "function": {"name": "read", "arguments": arguments}}
    chat = answer_tool_call(session, chat_call)
    assert isinstance(chat["content"], str) and "the image is not shown" in chat["content"]
    message = image_message(call_tool(session, chat_call))
    assert message is not None and message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_the_text_editor_view_of_an_image_shows_the_image(root: Path) -> None:
    (root / "logo.png").write_bytes(image_bytes((16, 16), "PNG"))
    with Workspace(root, dialect="anthropic") as ws:
        result = ws.session("s").call("str_replace_based_edit_tool", {"command": "view", "path": "logo.png"})
    assert shown(result).size == (16, 16) and "cat -n" not in result.text


# --- found in review -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tail", [b"\x2c\x00\x00", b"\x2c", b"\x21\xf9\x04", b""])
def test_a_gif_cut_in_its_next_frame_is_a_broken_image_not_an_internal_error(
    root: Path, session: Session, tail: bytes
) -> None:
    data = image_bytes((8, 8), "GIF")
    (root / "cut.gif").write_bytes(data[:-1] + tail)  # the trailer replaced by the start of another frame
    result = session.call("read", {"file_path": "cut.gif"})
    assert result.error is None or result.error.code == "FS_NOT_TEXT", result.text


def test_a_gif_of_many_frames_is_not_walked_frame_by_frame(root: Path, session: Session) -> None:
    frames = [Image.new("L", (1, 1), n % 256) for n in range(3000)]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], optimize=False)
    (root / "many.gif").write_bytes(out.getvalue())
    result = session.call("read", {"file_path": "many.gif"})
    assert "animated" in result.text and "3000" not in result.text and "3,000" not in result.text


def test_the_byte_budget_bounds_the_image_as_sent_in_base64(root: Path) -> None:
    (root / "noise.png").write_bytes(image_bytes((200, 200), "PNG", noise=True))  # ~120 KB raw
    with Workspace(root, max_image_bytes=100_000) as ws:
        result = ws.session("s").call("read", {"file_path": "noise.png"})
    assert len(result.media[0].base64) <= 100_000


def test_a_sixteen_bit_image_keeps_its_range(root: Path) -> None:
    gradient = Image.new("I;16", (1000, 10))
    gradient.putdata([x * 65 for x in range(1000)] * 10)
    out = io.BytesIO()
    gradient.save(out, format="PNG")
    (root / "depth.png").write_bytes(out.getvalue())
    with Workspace(root, max_image_pixels=500) as ws:
        image = shown(ws.session("s").call("read", {"file_path": "depth.png"})).convert("L")
    low, high = image.getextrema()
    assert low < 10 and high > 245  # stretched over its range, not clipped to white


def test_a_jpeg_is_shown_upright_by_its_exif_orientation(root: Path) -> None:
    image = Image.new("RGB", (3000, 1000), "red")
    exif = image.getexif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to view
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes())
    (root / "phone.jpg").write_bytes(out.getvalue())
    with Workspace(root, max_image_pixels=300) as ws:
        result = ws.session("s").call("read", {"file_path": "phone.jpg"})
    assert (result.value["width"], result.value["height"]) == (1000, 3000)
    assert shown(result).size == (100, 300)


def test_a_transparent_image_that_only_fits_as_jpeg_is_flattened_not_refused(root: Path) -> None:
    (root / "noise.png").write_bytes(image_bytes((300, 300), "PNG", "RGBA", noise=True))
    with Workspace(root, max_image_bytes=4_000) as ws:
        result = ws.session("s").call("read", {"file_path": "noise.png"})
    assert not result.is_error, result.text
    assert len(result.media[0].base64) <= 4_000


def test_integrations_that_pass_text_only_say_the_image_is_not_shown(root: Path, session: Session) -> None:
    from fs_tools.adapters import NOT_SHOWN
    from fs_tools.adapters.gemini import function_response

    (root / "logo.png").write_bytes(image_bytes((16, 16), "PNG"))
    part = function_response(session, {"name": "read", "args": {"file_path": "logo.png"}})
    output = part["function_response"]["response"]["output"]
    assert output.startswith("'logo.png': PNG image") and output.endswith(NOT_SHOWN)


def test_read_many_forgets_an_image_it_did_not_show(root: Path) -> None:
    for name in ("a.png", "b.png"):
        (root / name).write_bytes(image_bytes((120, 120), "PNG", noise=True))
    with Workspace(root, max_image_bytes=70_000) as ws:
        s = ws.session("s")
        result = s.call("read_many", {"file_paths": ["a.png", "b.png"]})
        assert "[shown as image 1 after the text]" in result.text
        refused = s.call("write", {"file_path": "b.png", "content": "x"})
        assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
        assert not s.call("write", {"file_path": "a.png", "content": "x"}).is_error


# --- issue 31: decoding is bounded, once per call, and a camera's photo is shown ----------------------------


def _scans(data: bytes) -> tuple[list[int], int]:
    """Where each scan (SOS segment) of a JPEG begins, and where its EOI is."""
    at, starts = 2, []
    while data[at + 1] != 0xD9:
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if data[at + 1] != 0xDA:
            at += 2 + length
            continue
        starts.append(at)
        at += 2 + length
        while not (data[at] == 0xFF and data[at + 1] not in (0x00, *range(0xD0, 0xD8))):
            at += 1
    return starts, at


def progressive_jpeg_repeating_its_last_scan(side: int, copies: int) -> bytes:
    """A flat progressive JPEG whose last scan (a few bytes: nothing to refine) comes ``copies`` more
    times before its end: each copy is one more pass over every block of the image."""
    out = io.BytesIO()
    Image.new("RGB", (side, side), (120, 80, 40)).save(out, format="JPEG", progressive=True, quality=90)
    data = out.getvalue()
    starts, end = _scans(data)
    return data[:end] + data[starts[-1] : end] * copies + data[end:]


def test_a_jpeg_of_thousands_of_repeated_scans_is_refused_before_decoding(root: Path, session: Session) -> None:
    # found in review: ~66 KB that kept read decoding for 11-25 s in the server's own process (a 620 KB
    # one, minutes); counting the scans refuses it before a pixel is decoded
    data = progressive_jpeg_repeating_its_last_scan(2000, 3000)
    (root / "scans.jpg").write_bytes(data)
    result = session.call("read", {"file_path": "scans.jpg"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith("'scans.jpg' is a JPEG of more than 256 scans")
    assert "ask the user for a smaller copy" in result.text
    assert result.exception is not None and isinstance(result.exception.__cause__, TooLarge)
    assert result.exception.__cause__.details == {"subject": "image", "scans": 257, "limit": 256}
    assert (root / "scans.jpg").read_bytes() == data
    (root / "fine.jpg").write_bytes(progressive_jpeg_repeating_its_last_scan(2000, 0))
    assert shown(session.call("read", {"file_path": "fine.jpg"})).size == (1568, 1568)


def test_scans_are_counted_by_the_jpeg_markers_not_by_bytes_that_look_like_them() -> None:
    from fs_tools.provider.image_worker import jpeg_scans

    baseline, progressive = image_bytes((64, 48), "JPEG"), image_bytes((64, 48), "JPEG", progressive=True)
    assert (jpeg_scans(baseline, 256).scans, jpeg_scans(progressive, 256).scans) == (1, 10)  # libjpeg's own
    comment = b"\xff\xda" * 100  # scan markers inside a comment segment are the comment's bytes
    commented = progressive[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + progressive[2:]
    assert jpeg_scans(commented, 256) == (10, True)
    hostile = progressive_jpeg_repeating_its_last_scan(64, 10_000)
    assert jpeg_scans(hostile, 256).scans == 257  # it stops counting past the limit


def test_a_decoding_past_the_cpu_bound_is_stopped_and_too_large(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.provider import images

    monkeypatch.setattr(images, "MAX_JPEG_SCANS", 10**9)  # the scan count passes: the child's bound stops it
    monkeypatch.setattr(images, "IMAGE_CPU_SECONDS", 1)
    (root / "scans.jpg").write_bytes(progressive_jpeg_repeating_its_last_scan(2000, 3000))
    result = session.call("read", {"file_path": "scans.jpg"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert "'scans.jpg' takes more than 1 s of CPU to read (a very complex or crafted image)" in result.text
    assert result.exception is not None and isinstance(result.exception.__cause__, TooLarge)
    assert result.exception.__cause__.details == {"subject": "image"}


def test_a_cancelled_read_kills_the_decoding(root: Path, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    from fs_tools.provider import child, images

    started: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    class CancelledOnceDecoding:
        def is_set(self) -> bool:
            return bool(started)

    monkeypatch.setattr(child.subprocess, "Popen", Recorded)
    monkeypatch.setattr(images, "MAX_JPEG_SCANS", 10**9)  # else refused before it decodes
    (root / "scans.jpg").write_bytes(progressive_jpeg_repeating_its_last_scan(2000, 3000))
    result = session.call("read", {"file_path": "scans.jpg"}, cancel=CancelledOnceDecoding())
    assert result.error is not None and result.error.code == "TOOL_ABORTED", result.text
    assert "'scans.jpg'" in result.text and "cancelled" in result.text
    assert len(started) == 1 and started[0].returncode == -9  # killed mid-decoding, and reaped


def test_the_servers_process_decodes_no_image_it_scales(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import ImageFile

    def decoded_here(self: object) -> None:
        raise RuntimeError("an image was decoded in the server's process")

    monkeypatch.setattr(ImageFile.ImageFile, "load", decoded_here)
    for name, fmt in (("a.png", "PNG"), ("b.jpg", "JPEG"), ("c.gif", "GIF"), ("d.webp", "WEBP")):
        (root / name).write_bytes(image_bytes((2000, 100), fmt))
        assert shown(session.call("read", {"file_path": name})).size == (1568, 78)


def test_read_many_decodes_each_distinct_image_once(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.tools import read

    decoded: list[str] = []

    def counted(data: bytes, display: str, *args: Any, **kwargs: Any) -> Any:
        decoded.append(display)
        return show_image(data, display, *args, **kwargs)

    show_image = read.show_image
    monkeypatch.setattr(read, "show_image", counted)
    (root / "a.png").write_bytes(image_bytes((3000, 200), "PNG"))
    (root / "copy.png").write_bytes((root / "a.png").read_bytes())
    (root / "scans.jpg").write_bytes(progressive_jpeg_repeating_its_last_scan(64, 300))
    paths = ["a.png", "a.png", "copy.png", "scans.jpg", "a.png", "scans.jpg"]
    result = session.call("read_many", {"file_paths": paths})
    assert decoded == ["a.png", "scans.jpg"]
    files = result.value["files"]
    assert [entry["read"]["shown_width"] if entry["read"] else entry["code"] for entry in files] == [
        1568,
        1568,
        1568,
        "FS_TOO_LARGE",
        1568,
        "FS_TOO_LARGE",
    ]
    assert result.media[0].data == result.media[1].data == result.media[2].data
    assert files[2]["read"]["path"] == "copy.png"
    assert files[5]["message"].startswith("'scans.jpg' is a JPEG of more than 256 scans")


def test_a_read_many_of_copies_of_a_refused_image_names_each_copy(root: Path, session: Session) -> None:
    data = progressive_jpeg_repeating_its_last_scan(64, 300)
    (root / "one.jpg").write_bytes(data)
    (root / "two.jpg").write_bytes(data)
    result = session.call("read_many", {"file_paths": ["one.jpg", "two.jpg"]})
    messages = [entry["message"] for entry in result.value["files"]]
    assert messages[0].startswith("'one.jpg' is a JPEG of more than 256 scans") and "two.jpg" not in messages[0]
    assert messages[1].startswith("'two.jpg' is a JPEG of more than 256 scans") and "one.jpg" not in messages[1]


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_a_54_megapixel_photo_is_shown_scaled_not_refused(root: Path, session: Session, fmt: str) -> None:
    # found by the acceptance run: 9000x6000 (a current camera's photo) was refused for its pixel count
    out = io.BytesIO()
    Image.linear_gradient("L").resize((9000, 6000)).convert("RGB").save(out, format=fmt)
    (root / "photo.img").write_bytes(out.getvalue())
    result = session.call("read", {"file_path": "photo.img"})
    assert shown(result).size == (1568, 1045)
    assert (result.value["width"], result.value["height"]) == (9000, 6000)
    assert "9,000×6,000 pixels; shown scaled to 1,568×1,045" in result.text


def test_an_image_past_the_memory_budget_is_too_large_saying_what_it_would_take(root: Path, session: Session) -> None:
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", 10_000, 10_000, 8, 6, 0, 0, 0))  # RGBA, under Pillow's limit
    (root / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", zlib.compress(bytes(1000))))
    result = session.call("read", {"file_path": "big.png"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith(
        "'big.png' is a PNG image of 10,000×10,000 pixels, which would take 762 MiB to decode and scale, more "
        "than the 640 MiB fs-tools gives an image — ask the user for a smaller copy"
    )
    assert result.exception is not None and isinstance(result.exception.__cause__, TooLarge)
    facts = {"subject": "image", "width": 10_000, "height": 10_000, "need": 800_000_000, "limit": 640 << 20}
    assert result.exception.__cause__.details == facts


def test_only_a_small_image_shown_as_it_is_is_decoded_without_a_child(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from fs_tools.provider import child

    started: list[list[str]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, command: list[str], *args: Any, **kwargs: Any) -> None:
            started.append(command)
            super().__init__(command, *args, **kwargs)

    monkeypatch.setattr(child.subprocess, "Popen", Recorded)
    (root / "shot.png").write_bytes(image_bytes((1200, 800), "PNG"))
    (root / "photo.jpg").write_bytes(image_bytes((1200, 800), "JPEG", progressive=True))
    for name in ("shot.png", "photo.jpg"):  # a screenshot, a photo of libjpeg's 10 scans: no child to start
        assert shown(session.call("read", {"file_path": name})).size == (1200, 800)
    assert started == []
    (root / "scans.jpg").write_bytes(progressive_jpeg_repeating_its_last_scan(1000, 40))  # 50 scans: the child's
    assert shown(session.call("read", {"file_path": "scans.jpg"})).size == (1000, 1000)
    assert len(started) == 1 and started[0][2:3] == ["image"]


def test_a_decoding_past_the_childs_memory_is_too_large_naming_the_bound(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.provider import images

    monkeypatch.setattr(images, "IMAGE_MEMORY_BYTES", 150 << 20)  # the estimate (144 MB) passes; the child cannot
    (root / "red.png").write_bytes(image_bytes((6000, 6000), "PNG"))
    result = session.call("read", {"file_path": "red.png"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith("'red.png' needs more than the 150 MiB fs-tools gives an image's reading — ask")
    assert result.exception is not None and isinstance(result.exception.__cause__, TooLarge)
    assert result.exception.__cause__.details == {"subject": "image", "limit": 150 << 20}


# --- review of issue 31: what the server's process decodes, and how the child's end is told --------------


@pytest.fixture
def decoders(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Where images are opened: ``here`` (the reader's Pillow open in the server's process, by the format
    it names: the tests' own opens name none) and ``child`` (the readers of the children started)."""
    import subprocess

    from fs_tools.provider import child

    seen: dict[str, list[str]] = {"here": [], "child": []}
    opened = Image.open

    def open_here(fp: Any, mode: str = "r", formats: Any = None) -> Any:
        if formats is not None:
            seen["here"].append(",".join(formats))
        return opened(fp, mode, formats)

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, command: list[str], *args: Any, **kwargs: Any) -> None:
            seen["child"].append(command[2])
            super().__init__(command, *args, **kwargs)

    monkeypatch.setattr(Image, "open", open_here)
    monkeypatch.setattr(child.subprocess, "Popen", Recorded)
    return seen


def _with_junk_before_its_second_scan(data: bytes) -> bytes:
    second = _scans(data)[0][1]
    return data[:second] + b"\x00" + data[second:]  # libjpeg skips it ("extraneous bytes") and decodes on


def test_a_jpeg_whose_scans_the_walk_cannot_vouch_for_is_never_decoded_in_the_servers_process(
    root: Path, session: Session, decoders: dict[str, list[str]]
) -> None:
    # found in review: one stray byte before the 2nd scan, or 16,385 empty comments before the frame, ended
    # the walk at 1 or 0 scans, so a 44 KB JPEG of thousands of scans was decoded here (5 s, uncancellable)
    progressive = image_bytes((64, 48), "JPEG", progressive=True)  # libjpeg's 10 scans
    (root / "junk.jpg").write_bytes(_with_junk_before_its_second_scan(progressive))
    (root / "comments.jpg").write_bytes(progressive[:2] + b"\xff\xfe\x00\x02" * (64 * 256 + 1) + progressive[2:])
    for name in ("junk.jpg", "comments.jpg"):
        assert shown(session.call("read", {"file_path": name})).size == (64, 48)
    assert decoders == {"here": [], "child": ["image", "image"]}
    # libjpeg's way past the stray byte is followed: the scans after it are counted, and refused before decoding
    (root / "scans.jpg").write_bytes(
        _with_junk_before_its_second_scan(progressive_jpeg_repeating_its_last_scan(64, 300))
    )
    result = session.call("read", {"file_path": "scans.jpg"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith("'scans.jpg' is a JPEG of more than 256 scans")
    assert decoders == {"here": [], "child": ["image", "image"]}  # refused by the walk: nothing opened


def test_the_scan_walk_says_whether_it_reached_the_images_end() -> None:
    from fs_tools.provider.image_worker import ScanWalk, jpeg_scans

    progressive = image_bytes((64, 48), "JPEG", progressive=True)
    starts, end = _scans(progressive)
    assert jpeg_scans(progressive, 256) == ScanWalk(10, complete=True)
    assert jpeg_scans(progressive[:end], 256) == ScanWalk(10, complete=True)  # cut in its last scan's data
    assert jpeg_scans(progressive[: starts[3] + 3], 256) == ScanWalk(3, complete=False)  # cut in a segment
    assert jpeg_scans(_with_junk_before_its_second_scan(progressive), 256) == ScanWalk(10, complete=False)
    filled = progressive[: starts[1]] + b"\xff" * 1000 + progressive[starts[1] :]  # fill bytes are allowed
    assert jpeg_scans(filled, 256) == ScanWalk(10, complete=True)
    comments = progressive[:2] + b"\xff\xfe\x00\x02" * (64 * 16 + 1) + progressive[2:]
    assert jpeg_scans(comments, 16) == ScanWalk(0, complete=False)  # past 64 segments a scan allowed


def _png_of_empty_chunks(size: int) -> bytes:
    """A 100x100 PNG whose header is followed by empty ancillary chunks up to ``size`` bytes."""
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", 100, 100, 8, 2, 0, 0, 0))
    pixels = _chunk(b"IDAT", zlib.compress(bytes(301 * 100))) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + header + _chunk(b"abCd", b"") * (size // 12) + pixels


def test_a_file_past_half_a_mebibyte_is_never_opened_in_the_servers_process(
    root: Path, session: Session, decoders: dict[str, list[str]]
) -> None:
    # found in review: shown as it is, 3.7 MB of empty PNG chunks, GIF comments or JPEG comments cost 0.8-2.5 s
    # of Pillow's Python in the server's process before a pixel was decoded
    small = 512 << 10  # images.SMALL_BYTES
    gif = image_bytes((100, 100), "GIF", "P")
    table = 3 * 2 ** ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0
    jpeg = image_bytes((100, 100), "JPEG")
    comment = b"\xff\xfe\xff\xff" + bytes(0xFFFD)  # 9 comments of 64 KB: a walk of a few segments
    files = {
        "chunks.png": _png_of_empty_chunks(small),
        "comments.gif": gif[: 13 + table] + b"\x21\xfe\x00" * (small // 3) + gif[13 + table :],
        "comments.jpg": jpeg[:2] + comment * 9 + jpeg[2:],
    }
    for name, data in files.items():
        assert small < len(data) < 3 * (5 << 20) // 4  # shown as it is
        (root / name).write_bytes(data)
        result = session.call("read", {"file_path": name})
        assert shown(result).size == (100, 100) and result.media[0].data == data
    assert decoders == {"here": [], "child": ["image"] * 3}
    noise = image_bytes((400, 400), "PNG", noise=True)
    assert len(noise) <= small  # at most that many bytes: decoded here
    (root / "noise.png").write_bytes(noise)
    assert shown(session.call("read", {"file_path": "noise.png"})).size == (400, 400)
    assert decoders == {"here": ["PNG"], "child": ["image"] * 3}


def _worker_that(root: Path, monkeypatch: pytest.MonkeyPatch, does: str) -> None:
    """The child's script replaced by one that reads the file and then ``does``."""
    from fs_tools.provider import child

    script = root.parent / "worker.py"
    script.write_text(
        "import os, signal, sys\n"
        'size = int.from_bytes(sys.stdin.buffer.read(8), "big"); sys.stdin.buffer.read(size)\n' + does + "\n"
    )
    monkeypatch.setattr(child, "_WORKER", str(script))


def test_a_reader_killed_as_it_writes_its_answer_is_told_by_the_bound_it_hit(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found in review: the half-written line was read as a corrupt file (FS_NOT_TEXT)
    _worker_that(
        root,
        monkeypatch,
        'sys.stdout.write(\'{"shown": {"width": 10, "data": "AAAA\'); sys.stdout.flush()\n'
        "os.kill(os.getpid(), signal.SIGXCPU)",
    )
    (root / "wide.png").write_bytes(image_bytes((3000, 100), "PNG"))
    result = session.call("read", {"file_path": "wide.png"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith("'wide.png' takes more than 20 s of CPU to read (a very complex or crafted image)")


def test_a_reader_that_fails_is_a_fault_in_fs_tools_not_a_file_too_large(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found in review: a crash of the reader (status 1) told the model to ask the user for a smaller copy
    _worker_that(root, monkeypatch, "raise RuntimeError('a bug in the reader at ' + os.getcwd())")
    (root / "wide.png").write_bytes(image_bytes((3000, 100), "PNG"))
    result = session.call("read", {"file_path": "wide.png"})
    assert result.error is not None and result.error.code == "FS_IO_ERROR", result.text
    assert result.text == (
        "'wide.png' could not be read: fs-tools' image reader failed (status 1) — a fault in fs-tools, not in the "
        "call: retry once, then report it to the host"
    )
    assert os.getcwd() not in result.text and "smaller copy" not in result.text


def test_libjpeg_out_of_the_childs_memory_is_too_large_not_a_broken_file(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found in review: Pillow says "broken data stream" when libjpeg cannot allocate, and the read was
    # FS_NOT_TEXT "truncated or corrupt"; the estimate (23 MB of pixels, 144 MB of coefficients) passes
    from fs_tools.provider import images

    monkeypatch.setattr(images, "IMAGE_MEMORY_BYTES", 100 << 20)
    out = io.BytesIO()
    Image.linear_gradient("L").resize((6000, 4000)).convert("RGB").save(out, format="JPEG", progressive=True)
    (root / "photo.jpg").write_bytes(out.getvalue())
    result = session.call("read", {"file_path": "photo.jpg"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert result.text.startswith("'photo.jpg' needs more than the 100 MiB fs-tools gives an image's reading — ask")
