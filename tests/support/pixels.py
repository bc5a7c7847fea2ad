"""Images read as plain pixels, for the picture tests."""

from __future__ import annotations

from PIL import Image


def pixels(image: Image.Image) -> list[tuple[int, int, int]]:
    """Return every pixel of an image as (red, green, blue), row by row."""
    data = image.convert("RGB").tobytes()
    return list(zip(data[0::3], data[1::3], data[2::3], strict=True))


def rgba_pixels(image: Image.Image) -> list[tuple[int, int, int, int]]:
    """Return every pixel of an image as (red, green, blue, alpha), row by row."""
    data = image.convert("RGBA").tobytes()
    return list(zip(data[0::4], data[1::4], data[2::4], data[3::4], strict=True))
