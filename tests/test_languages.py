"""Knowledge in every language: a project embedded by multilingual-e5-small finds a Thai,
Chinese, Arabic or Greek passage by a question in its language and by an English one; each
passage's words are analysed as its own language's (stems, pairs of characters for scripts
written without spaces); the records' keyword search finds unspaced words; a project moves
to another model while its searches answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Api, make_api
from naturali.embed.onnx import OnnxEmbedder
from naturali.settings import BGE_SMALL, MULTILINGUAL
from naturali.text.tokens import indexed, query_term_counts

# Each language's passage, its question, and the same question in English.
PASSAGES = {
    "th": (
        "/th.md",
        "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย มีประชากรมากกว่าแปดล้านคน",
        "เมืองหลวงของประเทศไทยคืออะไร",
        "What is the capital city of Thailand?",
    ),
    "zh": (
        "/zh.md",
        "长城是中国古代修建的军事防御工程，总长度超过两万公里。",
        "长城有多长？",
        "How long is the Great Wall of China?",
    ),
    "ar": (
        "/ar.md",
        "نهر النيل هو أطول نهر في أفريقيا ويمر عبر مصر والسودان.",
        "ما هو أطول نهر في أفريقيا؟",
        "Which is the longest river in Africa?",
    ),
    "el": (
        "/el.md",
        "Η Ακρόπολη της Αθήνας είναι αρχαία ακρόπολη πάνω σε βραχώδη λόφο.",
        "Πού βρίσκεται η Ακρόπολη;",
        "Where is the Acropolis?",
    ),
}
OTHERS = {
    "/en.md": "The refund policy allows returns within thirty days of purchase.",
    "/de.md": "Die Rückerstattung erfolgt innerhalb von vierzehn Tagen nach Eingang der Ware.",
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Iterator[Api]:
    yield from make_api(tmp_path_factory.mktemp("languages"), embedder)


@pytest.fixture(scope="module")
def project(api: Api) -> str:
    made = api.post("/v1/projects", json={"name": "world", "embedding_model": MULTILINGUAL})
    assert made.status_code == 201, made.text
    assert made.json()["embedding_model"] == MULTILINGUAL
    project_id = str(made.json()["id"])
    for path, content, *_ in PASSAGES.values():
        api.doc(project_id, path, content)
    for path, content in OTHERS.items():
        api.doc(project_id, path, content)
    return project_id


def _top(api: Api, project_id: str, query: str, **more: Any) -> dict[str, Any]:
    found = api.search(project_id, query=query, include_memories=False, **more)
    assert found.status_code == 200, found.text
    return dict(found.json()["results"][0])


@pytest.mark.parametrize("lang", list(PASSAGES))
def test_a_passage_is_found_by_a_question_in_its_language_and_in_english(
    api: Api, project: str, lang: str
) -> None:
    path, _, question, english = PASSAGES[lang]
    same = _top(api, project, question, explain=True)
    assert same["path"] == path
    assert same["explain"]["language"] == lang  # the hit's language, as it was analysed
    assert _top(api, project, english)["path"] == path


def test_the_hit_matches_of_a_right_to_left_passage_are_its_words(api: Api, project: str) -> None:
    hit = _top(api, project, "أطول نهر", explain=True)
    content, matches = hit["content"], hit["explain"]["matches"]
    words = [content[m["start"] : m["end"]] for m in matches]  # UTF-16 offsets (BMP here)
    assert words == ["أطول", "نهر", "نهر"] or set(words) == {"أطول", "نهر"}, words


def test_an_unspaced_word_is_found_inside_its_run_and_highlighted_alone(
    api: Api, project: str
) -> None:
    hit = _top(api, project, "长城", explain=True)
    assert hit["path"] == "/zh.md"
    spans = [hit["content"][m["start"] : m["end"]] for m in hit["explain"]["matches"]]
    assert spans == ["长城"]


def test_a_german_question_finds_the_passage_by_its_stems_alone(api: Api, project: str) -> None:
    found = api.search(
        project,
        query="Rückerstattungen",  # plural; the passage says "Rückerstattung"
        include_memories=False,
        explain=True,
    ).json()["results"]
    lexical = [r for r in found if r["explain"]["lexical_rank"] is not None]
    assert [r["path"] for r in lexical] == ["/de.md"]


def test_the_records_keyword_search_finds_an_unspaced_word(api: Api, project: str) -> None:
    store = api.post(f"/v1/projects/{project}/memory_stores", json={"name": "notes"}).json()["id"]
    base = f"/v1/projects/{project}/memory_stores/{store}/knowledge"
    record = {"kind": "claim", "title": "东京的人口", "body": "东京都的人口超过一千四百万。"}
    saved = api.post(f"{base}/save", json={"requestId": "r1", "record": record})
    assert saved.status_code == 200, saved.text
    hits = api.post(f"{base}/grep", json={"query": "人口"}).json()["hits"]
    assert [h["title"] for h in hits] == ["东京的人口"]
    snippet = hits[0]["snippet"]
    assert snippet["matchLocated"] and "人口" in snippet["text"], snippet
    assert api.post(f"{base}/grep", json={"query": "大阪"}).json()["hits"] == []


def test_english_is_analysed_as_it_always_was() -> None:
    """An English passage of ASCII alone takes the English path: stems, stopwords left out
    of its length; a question in English the same."""
    terms, length = indexed("The refunds were processed quickly.")
    assert terms == ["the", "refund", "were", "process", "quick"] and length == 3
    assert set(query_term_counts("How are refunds processed?")) == {"refund", "process"}


@pytest.fixture
def each_backend(tmp_path: Path, embedder: OnnxEmbedder, backend: dict[str, Any]) -> Iterator[Api]:
    yield from make_api(tmp_path, embedder, backend)


def test_a_project_moves_to_the_multilingual_model_while_it_answers(each_backend: Api) -> None:
    api = each_backend
    project = api.project("moving")
    assert api.get(f"/v1/projects/{project}").json()["embedding_model"] == BGE_SMALL
    for path, content in OTHERS.items():
        api.doc(project, path, content)
    zh_path, zh_content, _, english = PASSAGES["zh"]
    api.doc(project, zh_path, zh_content)
    before = api.search(project, query="refund policy", include_memories=False).json()
    moved = api.patch(f"/v1/projects/{project}", json={"embedding_model": MULTILINGUAL})
    assert moved.status_code == 200, moved.text
    assert moved.json()["embedding_model"] == BGE_SMALL  # until every passage is embedded
    assert moved.json()["embedding_model_next"] == MULTILINGUAL
    during = api.search(project, query="refund policy", include_memories=False).json()
    assert during["results"][0]["path"] == before["results"][0]["path"] == "/en.md"
    deadline = time.monotonic() + 120
    while api.get(f"/v1/projects/{project}").json()["embedding_model"] != MULTILINGUAL:
        assert time.monotonic() < deadline, "still moving"
        time.sleep(0.1)
    now = api.get(f"/v1/projects/{project}").json()
    assert now["embedding_model_next"] is None and now["chunks_to_reembed"] is None
    assert _top(api, project, english)["path"] == zh_path  # across languages now


def test_an_unknown_model_is_refused(api: Api, tmp_path: Path) -> None:
    refused = api.post("/v1/projects", json={"name": "x", "embedding_model": "gpt-embed"})
    assert refused.status_code == 400, refused.text


def test_questions_go_through_the_int8_query_model_close_to_the_engine(tmp_path: Path) -> None:
    """multilingual-e5-small's questions run as an int8 graph on onnxruntime, built from the
    engine's own weights: the vector stays that of the engine's reading of the question."""
    from naturali.embed.multilingual import MultilingualEmbedder

    model = MultilingualEmbedder(threads=1, cache_dir=tmp_path)
    assert model.query_model_loaded.wait(120)
    assert list(tmp_path.glob("e5-query-*.onnx"))  # built once, kept for the next start
    for question in (
        "What is the capital city of Thailand?",
        "长城有多长？",
        "Wo ist die Akropolis?",
    ):
        fast = model.embed_query(question)
        engine = model._model.query(question)
        assert float(fast @ engine) > 0.99
    long = "word " * 600  # past one window of pieces: the engine's reading, windowed
    assert float(model.embed_query(long) @ model._model.query(long)) > 0.9999
