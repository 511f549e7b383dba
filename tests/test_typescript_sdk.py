"""The TypeScript SDK cannot drift from the API: its committed OpenAPI is the app's, and
regenerating it with the pinned generator reproduces the committed code byte for byte. (The
SDK's own tests run under Node against a real server: ``npm test`` in sdk/typescript, from
``bash scripts/test``.)"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import Api
from naturali.api.generate.openapi import document

SDK = Path(__file__).resolve().parents[1] / "sdk" / "typescript"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_committed_openapi_is_what_the_server_serves(api: Api) -> None:
    served = api.http.get("/openapi.json").json()
    committed = json.loads((SDK / "openapi.json").read_text())
    assert committed == served == document(), "run `bash scripts/sdk` and commit the result"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_regenerating_the_sdk_changes_nothing(api: Api, tmp_path: Path) -> None:
    if shutil.which("node") is None or not (SDK / "node_modules").is_dir():
        pytest.fail("the TypeScript SDK needs Node 20 and `npm ci` in sdk/typescript")
    spec = tmp_path / "openapi.json"
    spec.write_text(json.dumps(api.http.get("/openapi.json").json(), indent=2))
    out = tmp_path / "generated"
    env = {**os.environ, "NATURALI_SDK_INPUT": str(spec), "NATURALI_SDK_OUTPUT": str(out)}
    subprocess.run(
        ["npx", "openapi-ts"], cwd=SDK, env=env, check=True, capture_output=True, timeout=300
    )
    assert _differences(SDK / "src" / "generated", out) == [], "run `bash scripts/sdk`"


def _differences(committed: Path, fresh: Path) -> list[str]:
    compared = filecmp.dircmp(committed, fresh)
    out = [f"{committed}: {n}" for n in compared.left_only + compared.right_only]
    out += [str(committed / n) for n in compared.diff_files + compared.funny_files]
    for name, sub in compared.subdirs.items():
        out += _differences(committed / name, fresh / name) if sub else []
    return out
