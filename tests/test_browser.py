"""fmat.browser: headless Chromium opens a page and reports console errors, failed requests,
images that do not decode and missing sections (slow tier: needs Debian's ``chromium``, which
.ci/run installs). The demo's pages are checked in tests/test_workflow.py
(test_demo_pages_in_a_browser), on the demo run CI already makes."""
from __future__ import annotations

import base64

import pytest

from fmat.browser import check_pages
from fmat.errors import InputError

PNG_1PX = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.mark.slow
def test_a_clean_page_passes_and_a_broken_one_is_caught(tmp_path):
    good = tmp_path / "good.html"
    good.write_text(f"<html><body><div id='verdict'>ok</div><img alt='dot' src='data:image/png;base64,{PNG_1PX}'>"
                    "</body></html>", encoding="utf-8")
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><img alt='broken' src='data:image/png;base64,AAAA'>"
                   f"<img alt='absent' src='{(tmp_path / 'absent.png').as_uri()}'>"
                   "<script>console.error('boom'); undefined_function();</script></body></html>", encoding="utf-8")
    shot = tmp_path / "shots" / "good.png"
    g, b = check_pages([good, bad], expect=["verdict"], screenshots={good: shot}, timeout=60)
    assert g.ok and g.n_images == 1 and g.screenshot == str(shot)
    assert base64.b64encode(shot.read_bytes()[:8]) == base64.b64encode(b"\x89PNG\r\n\x1a\n")
    assert not b.ok
    assert b.missing == ["verdict"]
    assert any("boom" in e for e in b.console_errors) and any("undefined_function" in e for e in b.console_errors)
    assert b.failed_requests and "ERR_FILE_NOT_FOUND" in " ".join(b.failed_requests)
    assert len(b.bad_images) == 2 and "broken" in b.bad_images[0]


def test_missing_browser_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="no Chromium found"):
        check_pages([tmp_path / "x.html"], executable="no-such-browser-xyz")
