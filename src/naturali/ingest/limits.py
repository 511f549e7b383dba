"""What reading one file may cost the worker that reads it (worker.py), scaled with the work:
CPU time grows with the file's bytes and, once a PDF says how many it has, with its pages, so
a 300-page report is read on a busy server and a small file that draws forever is still
stopped. The limit is the kernel's (``RLIMIT_CPU``): past it the worker is killed, whatever it
was doing, and isolated.py answers that the file needed more than a document may use.

Memory is bounded for the worker's whole life (``MEMORY_BYTES``, its address space), and a
worker that grew past ``RETIRE_RSS_BYTES`` is replaced after its file, so one large file
never leaves a large process behind."""

from __future__ import annotations

import resource
import sys

MiB = 1024 * 1024
BASE_CPU_SECONDS = 10.0
CPU_SECONDS_PER_MIB = 4.0
CPU_SECONDS_PER_PAGE = 0.25
CPU_SECONDS_PER_OCR_PAGE = 15.0  # a page read by OCR takes ~4 s of CPU here
SCANNED_PAGE_BYTES = 100 * 1024  # a scanned page is rarely smaller
MEMORY_BYTES = 3072 * MiB  # OCR: onnxruntime and OpenCV reserve more than they hold
RETIRE_RSS_BYTES = 768 * MiB  # a worker with the OCR engine loaded holds ~600


def over_code(data: bytes, filename: str) -> str:
    """The error code of a file that needed more than it may use."""
    pdf = data.startswith(b"%PDF-") or filename.lower().endswith(".pdf")
    return "pdf_limit_reached" if pdf else "file_limit_reached"


def cpu_seconds(size: int, pages: int = 0) -> float:
    """The CPU a file of ``size`` bytes and ``pages`` pages may take to read and chunk."""
    return BASE_CPU_SECONDS + CPU_SECONDS_PER_MIB * size / MiB + CPU_SECONDS_PER_PAGE * pages


def wall_seconds(size: int) -> float:
    """How long the server waits for a worker (niced, beside searches and embedding) before it
    gives up on it: a hang spends no CPU, so the CPU limit alone would never end it. A scan
    may need OCR on every page, one a ``SCANNED_PAGE_BYTES`` at most."""
    ocr = CPU_SECONDS_PER_OCR_PAGE * size / SCANNED_PAGE_BYTES
    return 60.0 + 4 * (cpu_seconds(size) + ocr)


_used_at_start = 0.0
_budget: float | None = None  # None outside a worker (a reader called in-process): no limit


def start(size: int) -> None:
    """A new file: the worker may spend ``cpu_seconds(size)`` more CPU from now."""
    global _used_at_start, _budget
    _used_at_start, _budget = _cpu_used(), cpu_seconds(size)
    _set()


def allow_pages(pages: int) -> None:
    """The file turned out to have ``pages`` pages: each adds to its budget."""
    _allow(CPU_SECONDS_PER_PAGE * pages)


def allow_ocr_page() -> None:
    """A page is read by OCR: it adds to the file's budget."""
    _allow(CPU_SECONDS_PER_OCR_PAGE)


def _allow(seconds: float) -> None:
    global _budget
    if _budget is not None:
        _budget += seconds
        _set()


def limit_process() -> None:
    """For the worker's life: its address space, and no core file when a limit kills it."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def should_retire() -> bool:
    return resident_bytes() > RETIRE_RSS_BYTES


def resident_bytes() -> int:
    """What this process holds now. Not ``ru_maxrss``: Linux carries the high-water mark
    across fork and exec, so every worker of a server holding more than the bound would
    report the server's and be replaced after each file (a new interpreter for every upload)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:  # not Linux: the peak, in macOS's bytes or the others' KiB
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set() -> None:
    assert _budget is not None
    soft = int(_used_at_start + _budget) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
