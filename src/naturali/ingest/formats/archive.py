"""The checks every ZIP-based format (Word, PowerPoint, EPUB) passes before its library sees
it: nothing is ever extracted to disk, and an archive is refused when it could be a bomb (too
many members, too much once inflated, an inflation ratio no document has), when a member's
name climbs out of the archive (``../``, an absolute path), or when an XML member declares
entities (the billion-laughs bomb, and XXE reading a local file) or, where the format never
has one, a DTD."""

from __future__ import annotations

import codecs
import contextlib
import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import PurePosixPath

from naturali.ingest.formats import FormatError

MAX_MEMBERS = 10_000
MAX_INFLATED_BYTES = 256 * 1024 * 1024
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_RATIO = 200  # text XML compresses ~10×; a bomb by thousands
_XML = re.compile(r"\.(xml|rels|opf|ncx|xhtml|html?|svg)$", re.IGNORECASE)


def open_archive(data: bytes, kind: str, *, required: str, dtd_allowed: bool) -> zipfile.ZipFile:
    """The archive, checked; ``required`` is a member every file of the kind has."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FormatError("invalid_file", f"the file is not a valid {kind} (ZIP) file") from exc
    if len(members) > MAX_MEMBERS:
        raise FormatError("unsafe_file", f"the {kind} file has more than {MAX_MEMBERS} parts")
    total = 0
    for member in members:
        _check_name(member.filename, kind)
        total += member.file_size
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > MAX_MEMBER_BYTES or (ratio > MAX_RATIO and member.file_size > 1e6):
            raise FormatError("unsafe_file", f"the {kind} file inflates too far (a ZIP bomb?)")
    if total > MAX_INFLATED_BYTES:
        raise FormatError("unsafe_file", f"the {kind} file inflates too far (a ZIP bomb?)")
    if required not in archive.namelist():
        raise FormatError(
            "invalid_file", f"the file is not a {kind} file: it has no {required} (wrong type?)"
        )
    for member in members:
        if _XML.search(member.filename):
            _check_xml(_read(archive, member, kind), member.filename, kind, dtd_allowed)
    return archive


def _check_name(name: str, kind: str) -> None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise FormatError("unsafe_file", f"the {kind} file has a part outside itself: {name!r}")


def _read(archive: zipfile.ZipFile, member: zipfile.ZipInfo, kind: str) -> bytes:
    # At most the declared size plus one byte: a member that inflates past what it declares
    # is refused without inflating the rest.
    with archive.open(member) as stream:
        data = stream.read(member.file_size + 1)
    if len(data) > member.file_size:
        raise FormatError("unsafe_file", f"the {kind} file inflates past what it declares")
    return data


def _check_xml(data: bytes, name: str, kind: str, dtd_allowed: bool) -> None:
    """Entities and DTDs are looked for in the text the XML parser would read, whatever the
    encoding the member declares (UTF-16, UTF-32, EBCDIC…), not only in its raw bytes."""
    for text in _decodings(data):
        if "<!ENTITY" in text:
            raise FormatError(
                "unsafe_file", f"the {kind} file declares XML entities ({name}); refused"
            )
        if not dtd_allowed and "<!DOCTYPE" in text:
            raise FormatError("unsafe_file", f"the {kind} file carries a DTD ({name}); refused")


_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "cp037", "cp500")
_DECLARED = re.compile(r"""encoding\s*=\s*["']([A-Za-z0-9._-]{1,40})["']""")


def _decodings(data: bytes) -> Iterator[str]:
    """The member as text in every encoding an XML parser could take it to be: the usual
    ones, EBCDIC's, and the one its declaration names."""
    encodings = list(_ENCODINGS)
    for guess in ("latin-1", "cp037", "utf-16-le", "utf-16-be"):
        declared = _DECLARED.search(data[:400].decode(guess, errors="ignore"))
        if declared:
            with contextlib.suppress(LookupError):  # a name Python has no codec for
                encodings.append(codecs.lookup(declared.group(1)).name)
    for encoding in dict.fromkeys(encodings):
        yield data.decode(encoding, errors="ignore")
