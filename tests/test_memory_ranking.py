"""Memories ranked as turns of a conversation (retrieval/conversation.py), and the second
stage (``rerank: true``), on both backends with the real models."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from conftest import Api
from naturali.embed import rerank
from naturali.embed.onnx import ModelIntegrityError
from naturali.retrieval import fusion
from naturali.retrieval.conversation import Conversation
from naturali.retrieval.hybrid import PRODUCT
from naturali.service.requests import SearchRequest

TURNS = [
    "Alex: How was the concert on Friday?",
    "Sam: Loud, but the band was great.",
    "Alex: Did you finish the report for work?",
    "Sam: Almost, I send it tomorrow.",
    "Alex: Where are you moving next year, Sam?",
    "Sam: To Lisbon, we found a flat near the river.",  # the answer: the question's reply
    "Alex: Nice! Do you still cook on weekends?",
    "Sam: Pasta, every Sunday with my brother.",
    "Alex: I am moving my desk to the other office.",
    "Sam: The new office has a good coffee machine.",
    "Alex: Are you moving the meeting to Monday?",
    "Sam: Yes, Monday at ten.",
]


class Chat:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.project = api.project()
        r = api.post(f"/v1/projects/{self.project}/memory_stores", json={"name": "chat"})
        self.store = r.json()["id"]
        self.ids = [self.remember(f"[2 May 2024] {turn}") for turn in TURNS]

    def remember(self, content: str) -> str:
        path = f"/v1/projects/{self.project}/memory_stores/{self.store}/memories"
        r = self.api.post(path, json={"content": content})
        assert r.status_code == 201, r.text
        return str(r.json()["id"])

    def search(self, **body: Any) -> list[dict[str, Any]]:
        r = self.api.search(self.project, **body)
        assert r.status_code == 200, r.text
        return list(r.json()["results"])

    def turns(self, results: list[Any]) -> list[int]:
        ids = [r["memory_id"] if isinstance(r, dict) else r.memory_id for r in results]
        return [self.ids.index(i) for i in ids]


@pytest.fixture
def chat(api: Api) -> Chat:
    return Chat(api)


def test_a_turn_brings_in_its_reply(chat: Chat) -> None:
    """The question's turn ranks first; its reply, which shares no word with the question,
    comes in as its neighbour. Without the conversation stage it does not make the top 4."""
    hits = chat.search(query="Where is Sam moving to?", include_documents=False, limit=4)
    assert {4, 5} <= set(chat.turns(hits))
    user = chat.api.naturali.storage.oldest_user()
    assert user is not None
    request = SearchRequest(query="Where is Sam moving to?", include_documents=False, limit=4)
    alone = replace(PRODUCT, conversation=None)
    without = chat.api.naturali.search.search(user, chat.project, request, alone)
    assert 4 in chat.turns(without) and 5 not in chat.turns(without)


def test_a_memory_that_lacks_a_name_the_question_gives_is_scaled_down(chat: Chat) -> None:
    api = chat.api
    user = api.naturali.storage.oldest_user()
    assert user is not None
    api.doc(chat.project, "/venue.md", "Tom booked the venue for the offsite.")
    request = SearchRequest(query="Which venue did Priya book?", limit=20, explain=True)
    names_only = replace(PRODUCT, conversation=Conversation(neighbour_weight=0.0))
    scaled = api.naturali.search.search(user, chat.project, request, names_only)
    plain = api.naturali.search.search(
        user, chat.project, request, replace(PRODUCT, conversation=None)
    )
    before = {_key(r): r.score for r in plain}
    after = {_key(r): r.score for r in scaled}
    for key, score in after.items():
        # no memory names Priya: each is scaled to 0.8; a document is left as it was
        factor = 1.0 if key.startswith("/") else 0.8
        assert score == pytest.approx(before[key] * factor, rel=1e-5), key


def _key(result: Any) -> str:
    return str(getattr(result, "path", None) or result.memory_id)


def test_rerank_is_there_only_when_asked_and_orders_what_it_rescored(chat: Chat) -> None:
    plain = chat.search(query="Where is Sam moving to?", limit=8, explain=True)
    assert all("rerank" not in hit["explain"] for hit in plain)
    hits = chat.search(query="Where is Sam moving to?", limit=12, explain=True, rerank=True)
    assert len(hits) == 12  # the depth (20) reaches every turn: all are rescored
    # in the order of their fused score blended with the cross-encoder's (over turns alone,
    # half of it)
    reranked, fused = _explained(hits, "rerank"), _explained(hits, "fused")
    blended = fusion.second_stage(fused, reranked, fusion.MEMORY_RERANK_WEIGHT).tolist()
    assert blended == sorted(blended, reverse=True)
    assert not np.array_equal(np.argsort(-fused), np.argsort(-reranked))  # they disagree
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)  # the places' scores, still falling
    assert sorted(scores) == sorted(h["explain"]["fused"] for h in hits)
    # the cross-encoder reads the reply as the answer
    assert chat.turns(hits)[:2] in ([5, 4], [4, 5])
    # a shallower depth reorders only its own top; the rest keep the fused order
    chat.api.naturali.search.second_stage.depth = 3
    shallow = chat.search(query="Where is Sam moving to?", limit=8, explain=True, rerank=True)
    assert all("rerank" in h["explain"] for h in shallow[:3])
    assert all("rerank" not in h["explain"] for h in shallow[3:])
    assert set(chat.turns(shallow[:3])) == set(chat.turns(plain)[:3])
    assert chat.turns(shallow)[3:] == chat.turns(plain)[3:]


def _explained(hits: list[dict[str, Any]], name: str) -> npt.NDArray[np.float32]:
    return np.array([hit["explain"][name] for hit in hits], np.float32)


def test_the_cross_encoder_has_a_fifth_of_the_blend_once_a_passage_is_among_the_turns(
    chat: Chat,
) -> None:
    """It reads documents' passages less well than conversation turns (docs/quality.md): with
    a passage in the top it reorders by a fifth of its score, not half."""
    chat.api.doc(chat.project, "/moves.md", "# Moves\n\nSam is moving to Lisbon in June.")
    hits = chat.search(query="Where is Sam moving to?", limit=12, explain=True, rerank=True)
    assert {hit["source_type"] for hit in hits} == {"document", "memory"}
    reranked, fused = _explained(hits, "rerank"), _explained(hits, "fused")
    for weight, orders in ((fusion.RERANK_WEIGHT, True), (fusion.MEMORY_RERANK_WEIGHT, False)):
        blended = fusion.second_stage(fused, reranked, weight).tolist()
        assert (blended == sorted(blended, reverse=True)) is orders


def test_rerank_without_a_query_is_a_fetch(chat: Chat) -> None:
    hits = chat.search(memory_store_ids=[chat.store], rerank=True, limit=3, explain=True)
    assert len(hits) == 3 and all("rerank" not in h["explain"] for h in hits)


def test_an_operators_model_directory_plugs_into_the_same_port(tmp_path: Path) -> None:
    """A directory of model.onnx and tokenizer.json (here a copy of the shipped one) scores
    as the shipped model does; a pinned hash that does not match refuses to load it."""
    mine = tmp_path / "my-reranker"
    mine.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        shutil.copy(rerank.shipped_dir() / name, mine / name)
    passages = ["Sam: To Lisbon, we found a flat.", "Sam: Pasta, every Sunday."]
    shipped = rerank.OnnxReranker().score("Where is Sam moving?", passages)
    own = rerank.OnnxReranker(mine, rerank.SHIPPED_MODEL_SHA256).score(
        "Where is Sam moving?", passages
    )
    assert np.allclose(shipped, own) and shipped[0] > shipped[1]
    with pytest.raises(ModelIntegrityError):
        rerank.OnnxReranker(mine, "0" * 64).score("Where is Sam moving?", passages)


def test_a_passages_rerank_score_does_not_depend_on_the_others() -> None:
    reranker = rerank.OnnxReranker()
    query = "Where is Sam moving?"
    passages = ["Sam: To Lisbon, we found a flat.", "Sam: Pasta, every Sunday with my brother."]
    together = reranker.score(query, passages)
    alone = [reranker.score(query, [p])[0] for p in passages]
    assert together.tolist() == alone


def test_a_question_of_any_accepted_length_is_reranked(chat: Chat) -> None:
    """A question at the API's limit (2,000 characters, ~450 pieces) leaves the cross-encoder
    no room for the passage unless the question is cut first: its first 64 pieces are read."""
    long = ("Where is Sam moving next year, and what did Sam find near the river? " * 40)[:2000]
    hits = chat.search(query=long, limit=5, explain=True, rerank=True)
    assert len(hits) == 5 and all("rerank" in hit["explain"] for hit in hits)
    assert 5 in chat.turns(hits)[:2]


def test_pairs_on_the_workers_score_as_pairs_in_turn() -> None:
    """The second stage runs its pairs on the composition root's workers, one thread each:
    each pair still alone, so the scores are the sequential ones, in the passages' order."""
    from concurrent.futures import ThreadPoolExecutor

    query = "Where is Sam moving?"
    passages = [f"Sam: {text}" for text in ("To Lisbon.", "Pasta on Sundays.", "A flat.")] * 3
    in_turn = rerank.OnnxReranker(threads=1).score(query, passages)
    with ThreadPoolExecutor(2) as pool:
        on_workers = rerank.OnnxReranker(pool=pool).score(query, passages)
    assert on_workers.tolist() == in_turn.tolist()
