"""The criterion data the repository carries (data/mirror): locked by sha256, documented, and
the only copy the project reads -- nothing in the repository points outside it."""

from __future__ import annotations

import hashlib
import re
import subprocess

from conftest import MIRROR, REPO


def _lock() -> dict[str, str]:
    rows = (MIRROR / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {line[66:]: line[:64] for line in rows if line.strip()}


def test_every_mirror_file_matches_its_lock():
    lock = _lock()
    files = sorted(
        p.relative_to(MIRROR).as_posix() for p in MIRROR.rglob("*") if p.is_file() and p.name not in ("README.md", "SHA256SUMS")
    )
    assert files == sorted(lock), "data/mirror holds files the lock does not list (or lacks some)"
    for rel, digest in lock.items():
        assert hashlib.sha256((MIRROR / rel).read_bytes()).hexdigest() == digest, rel


def test_the_readme_documents_each_file_with_its_checksum_source_and_licence():
    readme = (MIRROR / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*$", readme, re.M)}
    assert set(rows) == set(_lock())
    for rel, digest in _lock().items():
        cells = [c.strip() for c in rows[rel].strip("|").split("|")]
        assert len(cells) == 5, rel  # file | what | source | licence | sha256
        assert cells[4] == f"`{digest}`", rel
        assert "https://" in cells[2], rel
        assert cells[3], rel
    assert re.search(r"Retrieved .* on \d{4}-\d{2}-\d{2}", readme)


def test_the_demo_config_points_at_the_carried_data():
    import yaml

    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text(encoding="utf-8"))
    assert demo["mirror_dir"] == "data/mirror" and (REPO / demo["mirror_dir"]).is_dir()


def test_no_file_of_the_repository_refers_to_a_folder_beside_it():
    """Code, config, docs and tests never point at a shared folder beside the checkout (a development copy beside some
    checkouts, not part of the project). The one exception is the CI provisioning script, .ci/run: it installs the
    Quarto kit from there when present (issue 25), as it installs Chromium from Debian."""
    tracked = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    needle = re.compile(r"\.\./shared|parent\s*/\s*[\"']shared[\"']|parents\[\d\]\s*/\s*[\"']shared")
    offenders = []
    for rel in tracked:
        path = REPO / rel
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if rel == "tests/test_mirror_data.py":
            text = text.replace(needle.pattern, "")
        if rel == ".ci/run":  # CI provisioning, not the project's code (see the docstring)
            continue
        offenders += [f"{rel}:{i}" for i, line in enumerate(text.splitlines(), 1) if needle.search(line)]
    assert not offenders, offenders
