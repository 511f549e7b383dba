"""Which language a text is written in, and how its words become index terms.

A text's letters say its script. Scripts written without spaces between words (Han, kana,
Thai, Lao, Khmer, Myanmar) are indexed as overlapping pairs of characters, so that any word of
two or more characters is found without a dictionary; the others by words, stemmed by the
Snowball stemmer of their language where PyStemmer has one. Within a script the language is
told by ``py3langid`` (its naive Bayes model ships in its wheel), among the languages of that
script; text of ASCII alone, and Latin text the model is unsure of, is English, so English
is analysed as it always was.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache
from typing import Any

import Stemmer
from py3langid.langid import MODEL_FILE, LanguageIdentifier

# ISO 639-1 codes of the languages a Snowball stemmer analyses, by their script.
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "et": "estonian", "fi": "finnish",
    "fr": "french", "de": "german", "el": "greek", "hi": "hindi", "hu": "hungarian",
    "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian", "ne": "nepali",
    "no": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}  # fmt: skip
# The languages the model chooses among, a script's.
CANDIDATES = {
    "latin": (
        "en", "de", "es", "fr", "it", "pt", "nl", "sv", "da", "no", "fi", "et", "lt", "pl",
        "cs", "sk", "sl", "hr", "ro", "hu", "tr", "ca", "eu", "ga", "id", "ms", "vi", "sq",
    ),
    "cyrillic": ("ru", "uk", "bg", "sr", "mk", "be", "kk"),
    "arabic": ("ar", "fa", "ur"),
    "devanagari": ("hi", "ne", "mr"),
}  # fmt: skip
# A script's language when the script alone tells it.
ONLY = {
    "greek": "el", "hebrew": "he", "armenian": "hy", "georgian": "ka", "hangul": "ko",
    "han": "zh", "kana": "ja", "thai": "th", "lao": "lo", "khmer": "km", "myanmar": "my",
    "tamil": "ta", "bengali": "bn", "telugu": "te", "kannada": "kn", "malayalam": "ml",
    "gujarati": "gu", "gurmukhi": "pa", "sinhala": "si", "ethiopic": "am",
}  # fmt: skip
UNSPACED = frozenset({"han", "kana", "thai", "lao", "khmer", "myanmar"})
# The first code point of each script's blocks, in order (each block runs to the next one).
_BLOCKS = (
    (0x0000, "latin"), (0x0370, "greek"), (0x0400, "cyrillic"), (0x0530, "armenian"),
    (0x0590, "hebrew"), (0x0600, "arabic"), (0x0700, "other"), (0x0900, "devanagari"),
    (0x0980, "bengali"), (0x0A00, "gurmukhi"), (0x0A80, "gujarati"), (0x0B00, "other"),
    (0x0B80, "tamil"), (0x0C00, "telugu"), (0x0C80, "kannada"), (0x0D00, "malayalam"),
    (0x0D80, "sinhala"), (0x0E00, "thai"), (0x0E80, "lao"), (0x0F00, "other"),
    (0x1000, "myanmar"), (0x10A0, "georgian"), (0x1100, "hangul"), (0x1200, "ethiopic"),
    (0x13A0, "other"), (0x1780, "khmer"), (0x1800, "other"), (0x1E00, "latin"),
    (0x1F00, "greek"), (0x2000, "other"), (0x2E80, "han"), (0x3040, "kana"), (0x3100, "han"),
    (0xAC00, "hangul"), (0xD7B0, "other"), (0xF900, "han"), (0xFB00, "other"),
    (0xFF66, "kana"), (0xFFA0, "other"), (0x20000, "han"), (0x30000, "other"),
)  # fmt: skip
# Latin text the model gives less than this is English (a short or mixed text); a question of
# ASCII alone needs more (English questions told apart from German and Spanish ones on the
# development sets: 0.6 kept all but one of 4,346 English, 96% of the others).
SURE = 0.5
SURE_ASCII = 0.6
SAMPLE = 400  # characters a passage's language is told from


@lru_cache(maxsize=65536)
def script_of(c: str) -> str:
    code, found = ord(c), "other"
    for start, name in _BLOCKS:
        if code < start:
            break
        found = name
    return found


def script(text: str) -> str:
    """The script most of ``text``'s letters are written in ("latin" when it has none)."""
    counts: dict[str, int] = {}
    for c in text:
        if c.isalpha() or not c.isascii() and not c.isspace():
            name = script_of(c)
            counts[name] = counts.get(name, 0) + 1
    counts.pop("other", None)
    return max(counts, key=counts.__getitem__) if counts else "latin"


def language(text: str, *, ascii_is_english: bool = True) -> str:
    """``text``'s language, an ISO 639-1 code: a passage of ASCII alone is English; a
    question is asked of the model (many a German or Spanish one is ASCII)."""
    sample = text[:SAMPLE]
    if ascii_is_english and _ascii_letters(sample):
        return "en"
    written = script(sample)
    if written in ONLY:
        return ONLY[written]
    candidates = CANDIDATES.get(written)
    if candidates is None:
        return "und"
    best, probability = _ranked(sample, candidates)
    if written == "latin" and probability < (SURE_ASCII if sample.isascii() else SURE):
        return "en"
    return best


def _ascii_letters(sample: str) -> bool:
    """Every letter ASCII (curly quotes and dashes do not make English another language)."""
    return sample.isascii() or all(c.isascii() for c in sample if c.isalpha())


def _ranked(sample: str, candidates: tuple[str, ...]) -> tuple[str, float]:
    ranked = _identifier().rank(sample)
    return next(((lang, p) for lang, p in ranked if lang in candidates), (candidates[0], 0.0))


_lock = threading.Lock()
_loaded: list[Any] = []


def _identifier() -> Any:
    """The model, loaded once (0.6 s) by the first text that is not ASCII."""
    with _lock:
        if not _loaded:
            _loaded.append(LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True))
        return _loaded[0]


@lru_cache(maxsize=64)
def stemmer(lang: str) -> Any | None:
    """The Snowball stemmer of ``lang``, if PyStemmer has one."""
    algorithm = SNOWBALL.get(lang)
    return Stemmer.Stemmer(algorithm) if algorithm else None


def unspaced(word: str) -> bool:
    """Whether ``word`` is of a script written without spaces (its first letter's)."""
    return script_of(word[0]) in UNSPACED


def pairs(word: str) -> list[str]:
    """An unspaced run as overlapping pairs of characters (a one-character run alone)."""
    return [word] if len(word) < 2 else [word[i : i + 2] for i in range(len(word) - 1)]


def segmented(text: str) -> str:
    """``text`` with each run of an unspaced script written as its pairs of characters,
    spaced ("我住在东京" → "我住 住在 在东 东京"), for a tokeniser that splits on spaces."""
    if text.isascii():
        return text
    out: list[str] = []
    run: list[str] = []
    for c in text:
        if script_of(c) in UNSPACED and (c.isalpha() or unicodedata.category(c)[0] == "M"):
            run.append(c)
            continue
        if run:
            out.append(" " + " ".join(pairs("".join(run))) + " ")
            run = []
        out.append(c)
    if run:
        out.append(" " + " ".join(pairs("".join(run))) + " ")
    return "".join(out)
