"""The vault's own Git repository (``vault/.git``), driven through the git command line with
an explicit ``--git-dir`` and ``--work-tree``, so an enclosing repository is never touched."""

from __future__ import annotations

import subprocess
from pathlib import Path


class GitError(RuntimeError):
    pass


class VaultGit:
    def __init__(self, vault: Path, binary: str = "git") -> None:
        self.vault = vault.absolute()  # git runs with the vault as its working directory
        self.binary = binary

    def _git(self, *args: str) -> str:
        # Explicit --git-dir/--work-tree win over GIT_DIR and any enclosing repository.
        command = [
            self.binary,
            f"--git-dir={self.vault / '.git'}",
            f"--work-tree={self.vault}",
            *args,
        ]
        try:
            done = subprocess.run(
                command,
                cwd=self.vault,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
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
        self._git("init", "-q")
        self._git("config", "user.name", "naturali")
        self._git("config", "user.email", "naturali@localhost")
        self._git("config", "commit.gpgsign", "false")

    def commit(self, message: str, paths: list[str] | None = None) -> str | None:
        """Commit the given vault-relative paths (everything when None); the new commit id, or
        None when there was nothing to commit. Staging only the written paths keeps the cost
        flat as the vault grows."""
        self.ensure()
        self._git("add", "-A", "--", *(paths or ["."]))
        try:
            self._git("commit", "-q", "--no-verify", "-m", message)
        except GitError as exc:
            if "nothing to commit" in str(exc) or "nothing added" in str(exc):
                return None
            raise
        return self.head()

    def head(self) -> str | None:
        """HEAD's commit: read from the loose ref when there is one (no process to start)."""
        git_dir = self.vault / ".git"
        try:
            head = (git_dir / "HEAD").read_text().strip()
            if head.startswith("ref: "):
                loose = git_dir / head[5:]
                if loose.is_file():
                    return loose.read_text().strip()
            elif len(head) == 40:
                return head
            return self._git("rev-parse", "HEAD")
        except (GitError, OSError):
            return None
