"""tests/browser_pages.py: headless Chromium (Debian's, driven by Playwright) opens a page and
reports console errors, failed requests, external resources, images that do not decode,
duplicate ids and missing sections (slow tier: needs Debian's ``chromium``, which .ci/run and
`make test` install as root). The demo's pages are checked in tests/test_workflow.py
(test_demo_pages_in_a_browser, offline renderer) and tests/test_quarto.py (real Quarto)."""

from __future__ import annotations

import pytest
from browser_pages import check_pages, find_chromium

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


@pytest.mark.slow
def test_a_clean_page_passes_and_a_broken_one_is_caught(tmp_path):
    good = tmp_path / "good.html"
    good.write_text(
        f"<html><body><div id='verdict'>ok</div><img alt='dot' src='data:image/png;base64,{PNG_1PX}'>"
        "<a href='other.html'>a link is not a resource</a></body></html>",
        encoding="utf-8",
    )
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<html><head><script src='https://cdn.example.org/lib.js'></script></head><body>"
        "<p id='twice'>1</p><p id='twice'>2</p>"
        "<img alt='broken' src='data:image/png;base64,AAAA'>"
        f"<img alt='absent' src='{(tmp_path / 'absent.png').as_uri()}'>"
        "<script>console.error('boom'); undefined_function();</script></body></html>",
        encoding="utf-8",
    )
    shot = tmp_path / "shots" / "good.png"
    g, b = check_pages([good, bad], expect=["verdict"], screenshots={good: shot}, timeout=60)
    assert g.ok, g
    assert g.n_images == 1 and g.screenshot == str(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not b.ok
    assert b.missing == ["verdict"]
    assert any("boom" in e for e in b.console_errors) and any("undefined_function" in e for e in b.console_errors)
    assert any("ERR_FILE_NOT_FOUND" in f for f in b.failed_requests), b.failed_requests
    assert b.external_requests == ["https://cdn.example.org/lib.js"]  # blocked, and reported
    assert b.external_elements == ["<script> https://cdn.example.org/lib.js", f"<img> {(tmp_path / 'absent.png').as_uri()}"]
    assert b.duplicate_ids == ["twice"]
    assert len(b.bad_images) == 2 and "broken" in b.bad_images[0]


def test_missing_browser_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="no Chromium found"):
        find_chromium("no-such-browser-xyz")
