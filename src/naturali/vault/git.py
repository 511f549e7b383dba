"""The vault's own Git repository (``vault/.git``), driven through the git command line with
an explicit ``--git-dir`` and ``--work-tree``, so an enclosing repository is never touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class GitError(RuntimeError):
    pass


class VaultGit:
    def __init__(self, vault: Path, binary: str = "git") -> None:
        self.vault = vault
        self.binary = binary

    def _run(self, *args: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
        command = [
            self.binary,
            f"--git-dir={self.vault / '.git'}",
            f"--work-tree={self.vault}",
            *args,
        ]
        try:
            done = subprocess.run(
                command, cwd=self.vault, env=env, capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(str(exc)) from exc
        if done.returncode != 0:
            raise GitError((done.stderr or done.stdout).strip()[:500])
        return done.stdout.strip()

    def ensure(self) -> None:
        if (self.vault / ".git" / "HEAD").exists():
            return
        self.vault.mkdir(parents=True, exist_ok=True)
        self._run("init", "-q")
        self._run("config", "user.name", "naturali")
        self._run("config", "user.email", "naturali@localhost")
        self._run("config", "commit.gpgsign", "false")

    def commit(self, message: str) -> str | None:
        """Commit everything that changed in the vault; the new commit id, or None when
        there was nothing to commit."""
        self.ensure()
        self._run("add", "-A", "--", ".")
        if not self._run("status", "--porcelain"):
            return None
        self._run("commit", "-q", "--no-verify", "-m", message)
        return self._run("rev-parse", "HEAD")

    def head(self) -> str | None:
        try:
            return self._run("rev-parse", "HEAD")
        except GitError:
            return None
