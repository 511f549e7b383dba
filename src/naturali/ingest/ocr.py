"""Reading text from pixels: a scanned PDF page or an image, by RapidOCR (PP-OCR models as
ONNX, shipped inside the ``rapidocr`` wheel, run by onnxruntime), in the ingest worker. It is
the ``ocr`` extra (it brings OpenCV): without it a page with no text layer is stored with a
warning that names the extra. The engine is loaded once per worker, on its first page."""

from __future__ import annotations

import functools
import logging
from typing import Any

import numpy as np
import numpy.typing as npt

from naturali.ingest import limits

EXTRA = "pip install 'naturali[ocr]'"
_engine: Any = None
# A page is blank when fewer than this share of its pixels stand out from its background (a
# few specks of a scanner's dust, not a word): it is not worth seconds of OCR.
INK_SHARE = 0.0002
INK_LEVEL = 48  # how far from the background a pixel's grey must be to count as ink


@functools.cache  # a failed import is not retried for every page
def available() -> bool:
    try:
        # Imported here: the optional extra's presence is the question (a lazy import).
        import rapidocr  # noqa: F401
    except ImportError:
        return False
    return True


def read(image: npt.NDArray[np.uint8]) -> str:
    """The text of an image (rows of pixels, RGB), lines top to bottom."""
    limits.allow_ocr_page()
    found = _reader()(image)
    lines = getattr(found, "txts", None) or ()
    return "\n".join(str(line) for line in lines)


def blank(image: npt.NDArray[np.uint8]) -> bool:
    """Whether an image (grey, or RGB) is nearly uniform: nothing on it for OCR to read."""
    grey = image if image.ndim == 2 else image[:, :, :3].mean(axis=2)
    if grey.size == 0:
        return True
    background = np.median(grey)
    ink = np.count_nonzero(np.abs(grey.astype(np.int16) - int(background)) > INK_LEVEL)
    return bool(ink < INK_SHARE * grey.size)


def _reader() -> Any:
    global _engine
    if _engine is None:
        # Imported here: OpenCV and the models load only in a worker that meets a scan.
        from rapidocr import RapidOCR

        for name in ("RapidOCR", "rapidocr"):
            logging.getLogger(name).setLevel(logging.WARNING)
        _engine = RapidOCR()
    return _engine
