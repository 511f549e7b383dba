"""An image (PNG, JPEG, TIFF, WebP, and a GIF under one of their names: a screenshot, a photo
of a whiteboard, a scanned form) as a one-page document, read by OCR (ingest/ocr.py) in the
background job (``ocr_page``) unless it is blank. Pillow decodes it, refusing an image of more
pixels than a page ever has (a decompression bomb); the upload's request decodes it once to
refuse a broken or oversized one there."""

from __future__ import annotations

import io
import warnings

import numpy as np
import numpy.typing as npt
from PIL import Image

from naturali.ingest import ocr
from naturali.ingest.formats import FormatError, Pages

MAX_PIXELS = 50_000_000  # a 600-dpi A3 scan is ~35 million


def read(data: bytes) -> tuple[Pages, str | None, list[int]]:
    """One page, to be read by OCR unless it is blank (the image is decoded to check it)."""
    return [(1, "")], None, [] if ocr.blank(_pixels(data)) else [1]


def ocr_page(data: bytes, number: int) -> str:
    return ocr.read(_pixels(data))


def _pixels(data: bytes) -> npt.NDArray[np.uint8]:
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                return np.asarray(image.convert("RGB"))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise FormatError("file_limit_reached", f"the image is too large: {exc}") from exc
    except (OSError, ValueError, SyntaxError) as exc:
        raise FormatError(
            "invalid_file",
            "the image could not be read: it is damaged, or not an image format naturali reads "
            "(PNG, JPEG, TIFF, WebP, GIF)",
        ) from exc
