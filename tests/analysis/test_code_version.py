"""Which code played a sweep: its commit and, when the checkout had uncommitted changes, a hash of them, in the
manifest, the dataset card and the report."""

from __future__ import annotations

import hashlib
import json
import subprocess

from bargain_ray.__main__ import main
from bargain_ray.core.provenance import CodeVersion, read_code_version
from bargain_ray.execution import plan


def git(repo, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout


def test_uncommitted_changes_are_hashed_so_the_commit_alone_never_names_them(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "rules.py").write_text("WINDOW = 5\n")
    git(tmp_path, "add", "rules.py")
    git(tmp_path, "commit", "-qm", "first")
    head = git(tmp_path, "rev-parse", "HEAD").strip()
    assert read_code_version(where=tmp_path) == CodeVersion(commit=head, dirty=False, diff=None)
    (tmp_path / "rules.py").write_text("WINDOW = 6\n")
    changed = read_code_version(where=tmp_path)
    assert changed.commit == head and changed.dirty
    assert changed.diff == hashlib.sha256(git(tmp_path, "diff", "HEAD", "--binary").encode()).hexdigest()
    assert changed.describe() == f"commit {head} with uncommitted changes (diff sha256 {changed.diff})"
    (tmp_path / "rules.py").write_text("WINDOW = 7\n")
    assert read_code_version(where=tmp_path).diff not in (None, changed.diff)  # other changes, another hash
    (tmp_path / "notes.txt").write_text("untracked")
    git(tmp_path, "checkout", "rules.py")
    assert read_code_version(where=tmp_path).diff is None  # an untracked file is not the code that runs


def test_a_sweep_played_with_uncommitted_changes_records_and_shows_them(tmp_path, monkeypatch, ray_session):
    dirty = CodeVersion(commit="0123456789abcdef0123456789abcdef01234567", dirty=True, diff="f" * 64)
    monkeypatch.setattr(plan, "read_code_version", lambda keys=(): dirty)
    assert main(["+grid=bargaining_demo", f"run.dir={tmp_path}", "run.progress=false"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["git_commit"], manifest["git_diff"]) == (dirty.commit, dirty.diff)
    assert manifest["designs"][0]["git_diff"] == dirty.diff
    shown = f"commit {dirty.commit} with uncommitted changes (diff sha256 {dirty.diff})"
    assert f"- Code when the sweep started: {shown}" in (tmp_path / "dataset" / "README.md").read_text()
    assert f'<span id="code">played with {shown}</span>' in (tmp_path / "report.html").read_text()
