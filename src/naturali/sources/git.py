"""A Git repository as a source, read with the ``git`` executable the vaults already use (no
second Git implementation to trust): a bare repository kept per source, fetched shallow
(``--depth 1``, no tags, no submodules, no redirects, only the URL's own protocol), its tree
listed with each file's blob id, and a file's bytes read only when its blob changed since
the last sync — a sync with nothing new fetches nothing and reads nothing.

Nothing a user sends reaches git as an option: URLs and refs come after ``--`` (and are
refused when they start with ``-``), and git runs with no configuration but the fixed one
below. Its output never reaches a client: a failure is said in our words, its stderr logged."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from naturali.sources.addresses import Target

TIMEOUT_SECONDS = 600  # a fetch's whole run, at most
log = logging.getLogger("naturali.sources")
_SAID = {
    "fetch": "the repository could not be fetched: it is not there, the ref does not exist, "
    "or the server refused (the server's log has git's words)",
    "rev-parse": "the fetched ref names no commit",
}


class GitSourceError(Exception):
    """git refused or failed, said in our words (never git's output: it may quote a file)."""


@dataclass(frozen=True)
class TreeFile:
    path: str  # in the repository, "/"-separated
    blob: str  # the content's id: unchanged blob, unchanged file
    size: int


class GitRepository:
    def __init__(self, directory: Path, binary: str = "git", ssh_command: str | None = None):
        self.directory = directory
        self._binary = binary
        self._ssh = ssh_command

    def fetch(self, target: Target, ref: str | None, deadline: float | None = None) -> str:
        """Fetch ``ref`` (the remote's HEAD when None) shallow; the commit it names.
        ``deadline``: a ``time.monotonic()`` the fetch may not outlast."""
        if not (self.directory / "HEAD").exists():
            self.directory.mkdir(parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet")
        url, pins = _pinned(target)
        self._git(
            *pins,
            "fetch",
            "--quiet",
            "--depth=1",
            "--no-tags",
            "--no-recurse-submodules",
            "--no-write-fetch-head",
            "--",
            url,
            f"+{ref or 'HEAD'}:refs/naturali/fetched",
            protocol=target.scheme,
            deadline=deadline,
        )
        return self._git("rev-parse", "refs/naturali/fetched^{commit}").strip()

    def files(self, commit: str, folder: str) -> list[TreeFile]:
        """The regular files of ``commit`` under ``folder`` ("" for all): no links, no
        submodules."""
        args = ["ls-tree", "-r", "-l", "-z", "--full-tree", commit]
        if folder:
            args += ["--", folder.strip("/") + "/"]
        found = []
        for entry in self._git(*args).split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, blob, size = meta.split()
            if kind == "blob" and mode in ("100644", "100755"):
                found.append(TreeFile(path, blob, int(size)))
        return found

    def ignored(self, commit: str) -> str:
        """The repository's root ``.gitignore`` at ``commit`` ("" when it has none)."""
        listed = self._git("ls-tree", "-z", commit, "--", ".gitignore").split("\0")[0]
        if not listed:
            return ""
        return self.read(listed.split("\t")[0].split()[2]).decode("utf-8", "replace")

    def read(self, blob: str) -> bytes:
        return self._run("cat-file", "blob", blob).stdout

    def _git(self, *args: str, protocol: str | None = None, deadline: float | None = None) -> str:
        return self._run(*args, protocol=protocol, deadline=deadline).stdout.decode(
            "utf-8", "replace"
        )

    def _run(
        self, *args: str, protocol: str | None = None, deadline: float | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        safe = [
            "-c", "protocol.allow=never",
            "-c", f"protocol.{protocol}.allow=always" if protocol else "protocol.file.allow=never",
            "-c", "http.followRedirects=false",
            "-c", "core.hooksPath=/dev/null",
            "-c", "credential.helper=",
        ]  # fmt: skip
        env = _clean_environment(self.directory)
        if self._ssh:
            env["GIT_SSH_COMMAND"] = self._ssh
        seconds = float(TIMEOUT_SECONDS)
        if deadline is not None:
            seconds = max(1.0, min(seconds, deadline - time.monotonic()))
        try:
            done = subprocess.run(
                [self._binary, *safe, "-C", str(self.directory), *args],
                capture_output=True,
                env=env,
                timeout=seconds,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GitSourceError(f"git {args[0]} took more than {seconds:.0f} s") from exc
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip()
            log.warning("git %s in %s failed: %s", args[0], self.directory, said[:2000])
            raise GitSourceError(_SAID.get(args[0], f"git {args[0]} failed"))
        return done


def _clean_environment(home: Path) -> dict[str, str]:
    """git runs with nothing of the server's environment or its user's Git configuration (no
    credential, no GIT_* variable, no url rewrite a user's config could hold) and never asks
    a terminal for a password."""
    return {
        "PATH": os.defpath,
        "HOME": str(home),
        "LC_ALL": "C",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }


def _pinned(target: Target) -> tuple[str, list[str]]:
    """The URL to fetch and the options that make git connect to the address checked, not
    to whatever the name resolves to by then."""
    if target.address is None:
        return target.url, []
    if target.scheme in ("http", "https"):
        address = f"[{target.address}]" if ":" in target.address else target.address
        return target.url, ["-c", f"http.curloptResolve={target.host}:{target.port}:{address}"]
    host = f"[{target.address}]" if ":" in target.address else target.address
    return target.url.replace(target.host, host, 1), []
