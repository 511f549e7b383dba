"""Word tokens for the documents' lexical leg, in the language of their text
(``text/languages.py``): NFKD with diacritics removed (in the scripts where they are
optional), lowercase, split on anything that is not a letter, a digit or a script's own vowel
sign, then each word stemmed by its language's Snowball stemmer, or, in a script written
without spaces, cut into pairs of characters. A question is analysed the same way, in its own
language."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

from naturali.text import languages

# A letter or digit, or a vowel sign or tone mark of the scripts whose words need them
# (Brahmic scripts, Thai, Lao, Myanmar, Khmer), which Python's \w leaves out.
_MARKS = (
    "\u0900-\u0963\u0966-\u0dff\u0e00-\u0e2e\u0e30-\u0e4e\u0e50-\u0eff\u1000-\u109f\u1780-\u17ff"
)
WORD = re.compile(rf"(?:[^\W_]|[{_MARKS}])+", re.UNICODE)

# Words so common that they carry no evidence; dropped from queries (never from the index)
# unless the query has nothing else.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


def fold(text: str) -> str:
    """Case- and diacritic-insensitive form of ``text``."""
    if text.isascii():
        return text.lower()
    return text.translate({ord(c): fold_char(c) for c in set(text)})


@lru_cache(maxsize=65536)
def fold_char(c: str) -> str:
    """One character without its diacritics, lowercased (NFKD, combining marks dropped) —
    but in the scripts from Devanagari on, whose marks are letters' vowels and tones."""
    if ord(c) >= 0x0900:
        return c.lower()
    decomposed = unicodedata.normalize("NFKD", c)
    return "".join(x for x in decomposed if not unicodedata.combining(x)).lower()


def words(text: str) -> list[str]:
    """``text``'s words, folded; a run of a script written without spaces is one word."""
    return [part for w in WORD.findall(fold(text)) for part in _runs(w)]


def _runs(word: str) -> list[str]:
    """A word cut where it passes between a spaced and an unspaced script ("iphone東京")."""
    if word.isascii():
        return [word]
    parts, start = [], 0
    for i in range(1, len(word)):
        if languages.unspaced(word[i]) != languages.unspaced(word[i - 1]):
            parts.append(word[start:i])
            start = i
    return parts + [word[start:]]


@lru_cache(maxsize=200_000)
def stem(word: str, lang: str = "en") -> str:
    found = languages.stemmer(lang)
    return str(found.stemWord(word)) if found is not None else word


def word_terms(word: str, lang: str) -> list[str]:
    """A word's index terms: its stem (and the year a fiscal period names, ``_year``), or an
    unspaced run's pairs of characters."""
    if not word.isascii() and languages.unspaced(word):
        return languages.pairs(word)
    return [stem(word, lang), *_year(word)]


# A year under a short prefix: a fiscal or calendar year, a quarter or half ("FY2018",
# "CY2020", "Q32023"). A question says "FY2018" of a report that prints "2018" in its title
# and its columns (and one saying "fiscal 2018" is found by a question's "FY2018").
_PERIOD_YEAR = re.compile(r"[a-z]{1,2}\d?((?:19|20)\d\d)")


def _year(word: str) -> list[str]:
    found = _PERIOD_YEAR.fullmatch(word) if word[-1:].isdigit() else None
    return [found.group(1)] if found else []


def terms(text: str, lang: str | None = None) -> list[str]:
    """Index terms of a passage (every word) in its language (told when not given)."""
    lang = lang or languages.language(text)
    return [t for w in words(text) for t in word_terms(w, lang)]


def indexed(text: str, about: str = "") -> tuple[list[str], int]:
    """A passage's index terms (``terms``) and its length as BM25 weighs it: the terms a
    query keeps (English stopwords are indexed for a query of nothing else, but counting
    them would make a passage's length say how it is written rather than how much it says).
    ``about``'s words (its document's path) are terms of it too, but no part of its length:
    they are said of the passage, not by it."""
    if about:
        found, length = indexed(text)
        return found + list(_about_terms(about)), length
    lang = languages.language(text)
    found = words(text)
    if lang == "en" and text.isascii():  # the common case, as fast as it always was
        years = [y for w in found if w[-1].isdigit() for y in _year(w)]
        return list(map(stem, found)) + years, len(found) - sum(map(STOPWORDS.__contains__, found))
    kept = [w for w in found if lang != "en" or w not in STOPWORDS]
    return [t for w in found for t in word_terms(w, lang)], sum(_length(w) for w in kept)


@lru_cache(maxsize=4096)
def _about_terms(about: str) -> tuple[str, ...]:
    """A path's terms, read once for all its document's passages."""
    return tuple(terms(about, "en"))


def _length(word: str) -> int:
    return len(word) - 1 if len(word) > 1 and languages.unspaced(word) else 1


def query_terms(text: str) -> list[str]:
    """Distinct query terms, stopwords dropped unless nothing else is left."""
    return list(query_term_counts(text))


@lru_cache(maxsize=1024)
def query_language(text: str) -> str:
    """A question's language: one asked of the model, ASCII or not."""
    return languages.language(text, ascii_is_english=False)


def query_term_counts(text: str) -> Counter[str]:
    """Each query term (as ``query_terms``) with how often the query says it: a long
    question that names its subject three times is mostly about it. The question is analysed
    in its own language, as a passage in that language was."""
    lang = query_language(text)
    found = words(text)
    if lang == "en":
        found = [w for w in found if w not in STOPWORDS] or found
    return Counter(t for w in found for t in word_terms(w, lang))


def matched_spans(text: str, wanted: list[str]) -> list[tuple[int, int, str]]:
    """Where ``text``'s words whose terms are among ``wanted`` (``query_terms``) lie: each
    whole word's start and end in UTF-16 code units (as a browser's strings count), with its
    term. A word matches as the lexical leg tokenised it, never a part of one ("the" is not
    in "other") and never a stopword the query dropped."""
    wanted_set, lang = set(wanted), languages.language(text)
    found: list[tuple[int, int, str]] = []  # in code points
    for match in WORD.finditer(text):
        at = match.start()
        for part in _runs(match.group()):
            found += _matched(part, at, lang, wanted_set)
            at += len(part)
    spans, counted, at = [], 0, 0
    for start, end, term in found:
        counted += _utf16(text[at:start])
        begin = counted
        counted += _utf16(text[start:end])
        at = end
        spans.append((begin, counted, term))
    return spans


def _matched(part: str, at: int, lang: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """Where a word (at ``at``) matches: whole, or in an unspaced run the characters of the
    pairs it matched, each stretch of them once."""
    if part.isascii() or not languages.unspaced(part):
        term = next((t for t in terms(part, lang) if t in wanted), None)
        return [] if term is None else [(at, at + len(part), term)]
    runs: list[tuple[int, int, str]] = []
    for i, pair in enumerate(languages.pairs(fold(part))):
        if pair not in wanted:
            continue
        start, end = at + i, at + i + len(pair)
        if runs and runs[-1][1] >= start:
            runs[-1] = (runs[-1][0], end, runs[-1][2])
        else:
            runs.append((start, end, pair))
    return runs


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def names(text: str) -> list[str]:
    """The query terms of ``text``'s capitalised words (names, mostly): its stopwords and
    question words are left out whatever their case."""
    lang = query_language(text)
    found = [w for w in WORD.findall(text) if w[0].isupper()]
    kept = [f for f in map(fold, found) if f not in STOPWORDS]
    return list(dict.fromkeys(t for f in kept for t in word_terms(f, lang)))
