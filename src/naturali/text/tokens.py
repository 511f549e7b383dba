"""Word tokens for the documents' lexical leg: NFKD with diacritics removed, lowercase,
split on anything that is not a letter or digit, English Snowball stems."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

import Stemmer

WORD = re.compile(r"[^\W_]+", re.UNICODE)
_stemmer = Stemmer.Stemmer("english")

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
    """One character without its diacritics, lowercased (NFKD, combining marks dropped)."""
    decomposed = unicodedata.normalize("NFKD", c)
    return "".join(x for x in decomposed if not unicodedata.combining(x)).lower()


def words(text: str) -> list[str]:
    return WORD.findall(fold(text))


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


def terms(text: str) -> list[str]:
    """Index terms of a passage (every word, stemmed)."""
    return [stem(w) for w in words(text)]


def indexed(text: str) -> tuple[list[str], int]:
    """A passage's index terms (``terms``) and its length as BM25 weighs it: the words a
    query keeps (stopwords are indexed for a query of nothing else, but counting them would
    make a passage's length say how it is written rather than how much it says)."""
    found = words(text)
    return list(map(stem, found)), len(found) - sum(map(STOPWORDS.__contains__, found))


def query_terms(text: str) -> list[str]:
    """Distinct query terms, stopwords dropped unless nothing else is left."""
    return list(query_term_counts(text))


def query_term_counts(text: str) -> Counter[str]:
    """Each query term (as ``query_terms``) with how often the query says it: a long
    question that names its subject three times is mostly about it."""
    found = words(text)
    kept = [w for w in found if w not in STOPWORDS] or found
    return Counter(stem(w) for w in kept)


def matched_spans(text: str, wanted: list[str]) -> list[tuple[int, int, str]]:
    """Where ``text``'s words whose terms are among ``wanted`` (``query_terms``) lie: each
    whole word's start and end in UTF-16 code units (as a browser's strings count), with its
    term. A word matches as the lexical leg tokenised it, never a part of one ("the" is not
    in "other") and never a stopword the query dropped."""
    wanted_set, spans, at, counted = set(wanted), [], 0, 0
    for match in WORD.finditer(text):
        found = next((t for t in terms(match.group()) if t in wanted_set), None)
        if found is None:
            continue
        counted += _utf16(text[at : match.start()])
        start = counted
        counted += _utf16(match.group())
        at = match.end()
        spans.append((start, counted, found))
    return spans


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def names(text: str) -> list[str]:
    """The query terms of ``text``'s capitalised words (names, mostly): its stopwords and
    question words are left out whatever their case."""
    found = [w for w in WORD.findall(text) if w[0].isupper()]
    return list(dict.fromkeys(stem(f) for f in map(fold, found) if f not in STOPWORDS))
