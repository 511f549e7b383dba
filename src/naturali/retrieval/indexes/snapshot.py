"""A project's search index saved in the cache dir, so a server with a large project is ready
in seconds instead of re-reading and re-tokenising every chunk.

The snapshot holds the index's arrays (float32 and int8 vectors, per-row columns, BM25
postings as flat arrays), one after another in one file (``arrays.bin``, each at an offset
``meta.json`` gives), and its chunk and removal cursors, so on load only what changed since is
read from the store. Two files a project, not one an array: a server of ten thousand small
projects keeps 20,000 files for them, not 220,000, and opens one to load one. The arrays are
mapped, not read: a restart with a million chunks does not read 2 GB before it answers, and
the float32 rows stay in the file, paged in by the OS for the few rows a search rescores
(retrieval/vector_leg/vectors.py).

It is only a cache: one that does not match — another format, model or dimension, arrays that
do not fit together, or a store that no longer holds its newest chunk (a restored backup) — is
ignored, and the index is rebuilt from the store. Written to a temporary directory and
renamed, so a crash leaves the old snapshot, the new one or none, never half of one; a file
once renamed into place is never written again, so a mapping of it never changes under a
search.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from naturali.retrieval.index import ProjectIndex
from naturali.retrieval.lexical import LexicalArrays, LexicalIndex
from naturali.retrieval.owners import FILES, LAYOUT, Owners
from naturali.retrieval.strings import Strings
from naturali.retrieval.vector_leg.vectors import VectorLeg, Vectors

# 3: the int8 codes are of each row less the rows' mean (retrieval/vector_leg/vectors.py); 4:
# one mapped .npy file an array; 5: the owners as columns of text (retrieval/owners.py), not
# JSON; 6: postings of each chunk in its context (text/context.py), owners without titles; 7:
# the arrays in one file; 8: the vocabulary sorted, among them; 9: a row's length without
# stopwords; 10: each passage's terms in its own language (text/languages.py); 13: its
# document's path among its terms but not its length, a fiscal period's year a term of its
# own (text/tokens.py).
# After the dot, the owners' columns (retrieval/owners.py): a new one is a new format by itself.
FORMAT = f"13.{LAYOUT}"
_META = "meta.json"
_ARRAYS = "arrays.bin"
_ALIGN = 64  # each array starts at a multiple of this: aligned for any dtype and for SIMD
# A smaller snapshot is read, not mapped: a mapping keeps its file open (numpy's memmap holds a
# descriptor) while the index is loaded, and ten thousand small projects would hold ten
# thousand; reading one costs less than mapping it.
READ_BELOW = 4 * 1024 * 1024
_EXACT = "exact"
# Changed in place after a load (a removal clears a row's flag): read into memory, not mapped.
_COPIED = frozenset({"alive"})


def path_for(directory: Path, project_id: str) -> Path:
    return directory / project_id


Newest = tuple[int, str]  # the seq and id of the newest live chunk a snapshot holds


def save(index: ProjectIndex, directory: Path, newest: Newest | None) -> None:
    """Write ``index`` (held by the caller, so it does not change meanwhile)."""
    n = index.n
    vector_rows = 0 if index.stored_vectors is not None else n
    lexical = index.lexical.to_arrays()
    owners, known = index.owners.columns()
    meta: dict[str, Any] = {
        "format": FORMAT,
        "project_id": index.project_id,
        "model_id": index.model_id,
        "dimension": index.dimension,
        "chunk_cursor": index.chunk_cursor,
        "removal_cursor": index.removal_cursor,
        "newest": list(newest) if newest else None,
        "n": n,
        "dead": index.dead,
        "scale": index.vectors.scale,
        "error": index.vectors.error,
        "norm": index.vectors.norm,
        "centre": index.vectors.centre.tolist(),
        "owners_known": known,
        "stored_vectors": index.stored_vectors is not None,  # none held: the store has them
    }
    directory.mkdir(parents=True, exist_ok=True)
    _clear_leftovers(directory)
    staging = Path(tempfile.mkdtemp(prefix=".snapshot-", dir=directory))
    try:
        arrays: dict[str, np.ndarray[Any, Any]] = {
            "codes": index.vectors.codes[:vector_rows],
            "vector_offsets": index.vectors.offsets[:vector_rows],
            "alive": index.alive[:n],
            "source": index.source[:n],
            "owner": index.owner[:n],
            "seqs": index.seqs[:n],
            "offsets": lexical.offsets,
            "rows": lexical.rows,
            "tfs": lexical.tfs,
            "lengths": lexical.lengths,
            "vocabulary_data": lexical.vocabulary.data,
            "vocabulary_offsets": lexical.vocabulary.offsets,
        }
        for name, column in owners.items():
            arrays[f"owner_{name}_data"], arrays[f"owner_{name}_offsets"] = (
                column.data,
                column.offsets,
            )
        meta["arrays"] = _write_arrays(staging / _ARRAYS, arrays, index.vectors, vector_rows)
        (staging / _META).write_text(json.dumps(meta))
        target = path_for(directory, index.project_id)
        retired = directory / f".retired-{index.project_id}"
        if target.exists():
            shutil.rmtree(retired, ignore_errors=True)  # one a killed save left
            os.replace(target, retired)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


Layout = dict[str, tuple[int, str, list[int]]]  # name → offset, dtype, shape


def _write_arrays(
    path: Path, arrays: dict[str, np.ndarray[Any, Any]], vectors: Vectors, n: int
) -> Layout:
    """Write the arrays, then the first ``n`` float32 rows piece by piece (never a copy of
    them all in memory: 1.5 GB at a million chunks); where each one lies."""
    layout: Layout = {}
    with path.open("wb") as out:

        def start(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> None:
            out.write(b"\0" * (-out.tell() % _ALIGN))
            layout[name] = (out.tell(), dtype.str, list(shape))

        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            start(name, array.dtype, array.shape)
            out.write(array.tobytes())
        start(_EXACT, np.dtype(np.float32), (n, vectors.dimension))
        for piece in vectors.pieces(n):
            out.write(np.ascontiguousarray(piece, np.float32).tobytes())
        out.flush()
        os.fsync(out.fileno())
    return layout


def _read_arrays(folder: Path, layout: Layout) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays, mapped from the one file (read when small, ``READ_BELOW``; copied where
    changed in place, ``_COPIED``); a ValueError when the file is shorter than the arrays it
    should hold (a torn write)."""
    path = folder / _ARRAYS
    if path.stat().st_size < READ_BELOW:
        mapped: np.ndarray[Any, Any] = np.fromfile(path, np.uint8)
    else:
        mapped = np.memmap(path, np.uint8, mode="r")
    out: dict[str, np.ndarray[Any, Any]] = {}
    for name, (offset, dtype, shape) in layout.items():
        kind = np.dtype(dtype)
        size = kind.itemsize * int(np.prod(shape))
        if offset + size > mapped.size:
            raise ValueError(f"{name} runs past the end of {_ARRAYS}")
        array = mapped[offset : offset + size].view(kind).reshape(shape)
        out[name] = np.array(array) if name in _COPIED else array
    return out


def remap(index: ProjectIndex, directory: Path) -> None:
    """Read ``index``'s float32 rows from its snapshot just saved, no longer from memory (the
    caller holds it for writing, and saved it from these rows: a row never changes)."""
    folder = path_for(directory, index.project_id)
    try:
        if (folder / _ARRAYS).stat().st_size < READ_BELOW:
            return  # read, not mapped, when loaded: the rows held are what it would hold
        layout = json.loads((folder / _META).read_text())["arrays"]
        mapped = _read_arrays(folder, {_EXACT: layout[_EXACT]})[_EXACT]
    except (OSError, ValueError, KeyError):
        return  # replaced or removed meanwhile: the rows stay where they are
    held = index.vectors.mapped_bytes // max(index.dimension * 4, 1)
    if held <= mapped.shape[0] <= index.n and mapped.shape[1:] == (index.dimension,):
        index.vectors.adopt(mapped)


# When each snapshot directory was last cleared of leftovers, by this process.
_cleared: dict[Path, float] = {}


def _clear_leftovers(directory: Path, age: float = 600.0) -> None:
    """Staging directories of a server killed while saving (not one saving now: too young).
    Looked for at most once every ``age`` seconds a directory: with ten thousand projects'
    snapshots in it, listing it for every save was ~3% of a busy server's Python time."""
    now = time.monotonic()
    if now - _cleared.get(directory, -age) < age:
        return
    _cleared[directory] = now
    for entry in directory.glob(".*"):
        try:
            if time.time() - entry.stat().st_mtime > age:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


def saved(directory: Path, at_least: int = 0) -> list[str]:
    """The projects with a snapshot in ``directory`` of ``at_least`` bytes of arrays, the most
    recently saved first. Each entry is read on its own: one replaced or removed while listed
    is left out, not all."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    found: list[tuple[float, str]] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue  # a snapshot being saved, or the one it replaces (``save``)
        try:
            if not at_least or (entry / _ARRAYS).stat().st_size >= at_least:
                found.append(((entry / _META).stat().st_mtime, entry.name))
        except OSError:
            continue  # no snapshot here, or removed meanwhile
    return [project_id for _, project_id in sorted(found, reverse=True)]


def load(
    directory: Path,
    project_id: str,
    dimension: int,
    model_id: str,
    holds: Callable[[int, str], bool],
    stored: Callable[[ProjectIndex], VectorLeg] | None = None,
) -> ProjectIndex | None:
    """The saved index of ``project_id``, or None when there is none that matches or the store
    no longer ``holds`` the newest chunk it saw (by seq and id). One saved without vectors
    (the store answered its vector leg) is given the leg ``stored`` makes for it, or is None
    without one."""
    folder = path_for(directory, project_id)
    try:
        meta = json.loads((folder / _META).read_text())
        if (meta["format"], meta["project_id"], meta["dimension"], meta["model_id"]) != (
            FORMAT,
            project_id,
            dimension,
            model_id,
        ):
            return None
        if meta["newest"] is not None and not holds(*meta["newest"]):
            return None
        loaded = _read_arrays(folder, meta["arrays"])
        if not _consistent(meta, loaded) or (meta["stored_vectors"] and stored is None):
            return None
        index = _restore(meta, loaded)
        if stored is not None and meta["stored_vectors"]:
            index.store_vectors(stored(index))
        return index
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def _consistent(meta: dict[str, Any], arrays: dict[str, Any]) -> bool:
    """Every per-row array has a row for each of the index's rows, and the postings' offsets
    cover the vocabulary and the postings exactly."""
    n, dimension = int(meta["n"]), int(meta["dimension"])
    known = int(meta["owners_known"])
    owners = len(arrays["owner_keys_offsets"]) - 1
    vector_rows = 0 if meta["stored_vectors"] else n
    per_row = ("alive", "source", "owner", "seqs", "lengths")
    offsets = arrays["offsets"]
    return (
        all(len(arrays[name]) == n for name in per_row)
        and len(arrays["vector_offsets"]) == vector_rows
        and arrays["exact"].shape == (vector_rows, dimension)
        and arrays["codes"].shape == (vector_rows, dimension)
        and len(meta["centre"]) == dimension
        and len(offsets) == len(arrays["vocabulary_offsets"])
        and int(arrays["vocabulary_offsets"][-1]) == len(arrays["vocabulary_data"])
        and int(offsets[-1]) == len(arrays["rows"]) == len(arrays["tfs"])
        and all(
            int(arrays[f"owner_{c}_offsets"][-1]) == len(arrays[f"owner_{c}_data"])
            and len(arrays[f"owner_{c}_offsets"]) == (owners if c == "keys" else known) + 1
            for c in FILES
        )
        and owners > int(arrays["owner"].max(initial=-1))
    )


def _restore(meta: dict[str, Any], arrays: dict[str, Any]) -> ProjectIndex:
    n = int(meta["n"])
    vectors = Vectors(int(meta["dimension"]))
    vectors.adopt(arrays["exact"])
    vectors.codes, vectors.offsets = arrays["codes"], arrays["vector_offsets"]
    vectors.scale, vectors.error, vectors.norm = meta["scale"], meta["error"], meta["norm"]
    vectors.centre = np.array(meta["centre"], np.float32)
    columns = {c: Strings(arrays[f"owner_{c}_data"], arrays[f"owner_{c}_offsets"]) for c in FILES}
    index = ProjectIndex(
        meta["project_id"],
        int(meta["dimension"]),
        model_id=meta["model_id"],
        chunk_cursor=int(meta["chunk_cursor"]),
        removal_cursor=int(meta["removal_cursor"]),
        n=n,
        dead=int(meta["dead"]),
        vectors=vectors,
        alive=arrays["alive"],
        source=arrays["source"],
        owner=arrays["owner"],
        seqs=arrays["seqs"],
        owners=Owners(columns, int(meta["owners_known"])),
        lexical=LexicalIndex.from_arrays(
            LexicalArrays(
                Strings(arrays["vocabulary_data"], arrays["vocabulary_offsets"]),
                arrays["offsets"],
                arrays["rows"],
                arrays["tfs"],
                arrays["lengths"],
            )
        ),
    )
    return index
