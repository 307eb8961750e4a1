"""Open report pages in a real browser and say what a reader would see (a test helper).

:func:`check_pages` drives Debian's ``chromium`` with Playwright for Python (``playwright``,
pinned in the ``test`` extra; launched with ``executable_path``, so Playwright's own browser
download is never used). Per page it reports console errors and uncaught exceptions, failed
requests, every request for something outside the page (the network is blocked: a page must
read offline), elements that load an external resource (``<script src>``, ``<link href>``,
``<img src>``... not a ``data:`` URI), images that do not decode, duplicate element ids, which
of the expected sections are missing, and (optionally) writes a PNG screenshot.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

#: executables tried, in order, when none is given (Debian: apt-get install chromium)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
#: Chromium flags of these machines (docs: /usr/share/doc/chromium; no network services)
FLAGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]

#: JavaScript run in each loaded page: decode every image, list external resources, duplicate
#: ids and the expected sections that are missing; the page's outline (headings outside the
#: title block and the table of contents, TOC entries, tables, figures, captions, verdict
#: cells), to compare two renderings of one page (typographic quotes and pilcrow
#: anchors left out)
_PAGE_SCRIPT = r"""async (ids) => {
  const images = await Promise.all([...document.images].map(async (img, i) => {
    try { await img.decode(); return img.naturalWidth > 0 ? null : `image ${i} (${img.alt}) has no width`; }
    catch (e) { return `image ${i} (${img.alt}) does not decode: ${e}`; }
  }));
  const loaders = 'script[src], link[href], img[src], iframe[src], source[src], video[src], audio[src], embed[src], object[data]';
  const external = [...document.querySelectorAll(loaders)]
    .map(e => `<${e.tagName.toLowerCase()}> ${e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('data')}`)
    .filter(s => !/> data:/.test(s));
  const seen = {};
  for (const e of document.querySelectorAll('[id]')) seen[e.id] = (seen[e.id] || 0) + 1;
  const text = e => e.textContent.replace(/[\u00b6\u2018\u2019]/g, c => c === '\u00b6' ? '' : "'").replace(/\s+/g, ' ').trim();
  const inToc = e => !!e.closest('nav#TOC');
  const verdicts = {};
  for (const c of ['v-replicated', 'v-not', 'v-nc']) verdicts[c] = document.querySelectorAll(`td.${c}`).length;
  const outline = {
    headings: [...document.querySelectorAll('h1, h2, h3')].filter(e => !inToc(e) && !e.closest('header'))
      .map(e => `${e.tagName.toLowerCase()} ${text(e)}`),
    toc: [...document.querySelectorAll('nav#TOC a')].map(text),
    tables: document.querySelectorAll('table').length,
    figures: document.querySelectorAll('img.paper-figure').length,
    captions: [...document.querySelectorAll('figcaption, caption, .figure-caption, .quarto-float-caption')].map(text),
    verdicts: verdicts,
    banner: document.querySelectorAll('.demo-banner').length,
  };
  return {bad_images: images.filter(x => x), n_images: document.images.length, outline: outline,
          external: external.map(s => s.slice(0, 200)),
          duplicate_ids: Object.keys(seen).filter(k => seen[k] > 1),
          missing: ids.filter(id => !document.getElementById(id) && !document.querySelector(id)),
          title: document.title};
}"""


def find_chromium(executable: str | None = None) -> str:
    """The Chromium executable (``executable`` or the first of :data:`CHROMIUM_NAMES` on PATH)."""
    for name in [executable] if executable else CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    raise FileNotFoundError("no Chromium found: install it (Debian: apt-get install chromium) or pass its path")


@dataclass
class PageReport:
    """What one page did in the browser."""

    path: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    external_elements: list[str] = field(default_factory=list)
    bad_images: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    n_images: int = 0
    outline: dict = field(default_factory=dict)
    title: str = ""
    screenshot: str = ""

    @property
    def ok(self) -> bool:
        return not (
            self.console_errors
            or self.failed_requests
            or self.external_requests
            or self.external_elements
            or self.bad_images
            or self.duplicate_ids
            or self.missing
        )


_LOCAL = re.compile(r"^(file|data|about|blob):")


def check_pages(
    pages: Sequence[str | Path],
    expect: Sequence[str] = (),
    screenshots: dict | None = None,
    executable: str | None = None,
    width: int = 1300,
    timeout: float = 60.0,
) -> list[PageReport]:
    """Open each page (a file path) in one headless Chromium; ``expect``: element ids (or CSS
    selectors) every page must have; ``screenshots``: {page path: PNG path} to write (the
    whole page, ``width`` px wide)."""
    from playwright.sync_api import sync_playwright

    chrome = find_chromium(executable)
    screenshots = {str(Path(k).resolve()): Path(v) for k, v in (screenshots or {}).items()}
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chrome, headless=True, args=FLAGS, timeout=timeout * 1000)
        try:
            for page_path in pages:
                path = Path(page_path).resolve()
                if not path.exists():
                    raise FileNotFoundError(f"no page {path}: render the reports first")
                rep = PageReport(str(path))
                context = browser.new_context(viewport={"width": width, "height": 900}, service_workers="block")
                # the network is off limits: a page must read offline
                context.route(re.compile(r"^(?!(file|data|about|blob):)"), lambda route: route.abort("blockedbyclient"))
                page = context.new_page()
                page.set_default_timeout(timeout * 1000)
                page.on(
                    "console",
                    lambda m, rep=rep: (
                        rep.console_errors.append(f"console.{m.type}: {m.text}") if m.type in ("error", "assert") else None
                    ),
                )
                page.on("pageerror", lambda e, rep=rep: rep.console_errors.append(f"uncaught: {e}"))
                page.on("request", lambda r, rep=rep: None if _LOCAL.match(r.url) else rep.external_requests.append(r.url[:200]))
                page.on(
                    "requestfailed",
                    lambda r, rep=rep: rep.failed_requests.append(f"{r.failure} ({r.resource_type}) {r.url[:200]}"),
                )
                page.goto(path.as_uri(), wait_until="load")
                info = page.evaluate(_PAGE_SCRIPT, list(expect))
                rep.bad_images, rep.n_images = info["bad_images"], info["n_images"]
                rep.external_elements, rep.duplicate_ids = info["external"], info["duplicate_ids"]
                rep.missing, rep.title, rep.outline = info["missing"], info["title"], info["outline"]
                shot = screenshots.get(str(path))
                if shot is not None:
                    shot.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(shot), full_page=True)
                    rep.screenshot = str(shot)
                context.close()
                out.append(rep)
        finally:
            browser.close()
    return out


def follow_report_links(report_html: str | Path, page: str | Path, clicks: Sequence[str], timeout: float = 60.0) -> dict:
    """Inside Snakemake's report (``report_html``, from ``snakemake --report report.zip``,
    unpacked), show ``page`` (a path relative to it) in an iframe as the report's viewer does,
    then click, one after the other, the first link matching each CSS selector of ``clicks``
    inside it. Returns {"urls": [the iframe's URL after each click], "titles": [...],
    "console_errors": [...] of the report and its frame}."""
    from playwright.sync_api import sync_playwright

    report_html = Path(report_html).resolve()
    out = {"urls": [], "titles": [], "console_errors": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=FLAGS, timeout=timeout * 1000)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.on("console", lambda m: out["console_errors"].append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: out["console_errors"].append(str(e)))
            tab.goto(report_html.as_uri(), wait_until="load")
            tab.evaluate(
                "src => { const f = document.createElement('iframe'); f.id = 'fmat-view'; f.src = src;"
                " f.className = 'w-full h-screen'; document.body.appendChild(f); }",
                Path(page).as_posix(),
            )
            tab.wait_for_timeout(2000)
            for selector in clicks:
                tab.frame_locator("#fmat-view").locator(selector).first.click(timeout=timeout * 1000)
                tab.wait_for_timeout(2000)
                frame = next(f for f in tab.frames if f != tab.main_frame)
                out["urls"].append(frame.url)
                out["titles"].append(frame.title())
        finally:
            browser.close()
    return out
