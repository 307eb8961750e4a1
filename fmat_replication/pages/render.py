"""Writing a report page (rules report_study, report_index): with Quarto, or without it.

:func:`render_page` builds the page (:func:`~.study.study_page`, :func:`~.overview.overview_page`)
from its rule's inputs and writes ``results/reports/{study,index}.html``: **offline** (config
``report_engine: offline``; the default without ``quarto`` on PATH) by :meth:`Page.html` in this
process, or **quarto**: :meth:`Page.markdown` under the front matter of ``reports/{study,index}.qmd``
less :data:`BY_HAND_KEYS`, through ``quarto render page.md --to html --output NAME`` (the markdown
engine, no kernel; the same bytes as the document rendered by hand). How Quarto's process is
handled (SIGTERM, not SIGKILL, first; :func:`_terminate_as_exit`; a time limit; its output in a
file) and why is in docs/reports.md. The page is written atomically (:func:`fmat.io.atomic_path`).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Mapping

import yaml

from fmat.errors import FmatError, InputError, RenderError
from fmat.io import atomic_path

from .overview import overview_page
from .study import study_page

log = logging.getLogger(__name__)

#: the renderers: auto = Quarto when ``quarto`` is on PATH, else offline
ENGINES = ("auto", "quarto", "offline")
#: the Quarto release the reports are tested with (docs/reports.md)
QUARTO_TESTED = "1.7.34"
#: the repository (its ``reports/`` holds the Quarto documents)
ROOT = Path(__file__).resolve().parents[2]
#: the Quarto document of each page
SOURCES = {"study": ROOT / "reports" / "study.qmd", "index": ROOT / "reports" / "index.qmd"}
#: front-matter keys a document needs only when rendered by hand (its filter, reports/page.lua,
#: and the page it asks for), and a kernel's keys: the rule's page.md has its body already
BY_HAND_KEYS = ("filters", "fmat-page", "study", "jupyter", "execute")
#: what to do when a page cannot be written (the workflow's outputs have fixed places)
OUTPUT_FIX = (
    "free space on the disk that holds results/ (or make its folder writable), then run the same "
    "snakemake command again: it goes on from the pages not yet written"
)


def quarto_path() -> str | None:
    """The ``quarto`` executable on PATH, or None."""
    return shutil.which("quarto")


def choose_engine(engine: str = "auto") -> str:
    """The renderer to use: ``quarto`` if asked for or (``auto``) on PATH, else ``offline``.

    Raises
    ------
    fmat.errors.InputError
        An unknown engine, or ``quarto`` asked for but not on PATH (with the fix).
    """
    if engine not in ENGINES:
        raise InputError(
            f"unknown report engine {engine!r}",
            where="report_engine",
            fix=f"use one of {', '.join(ENGINES)} (config report_engine)",
        )
    if engine == "auto":
        return "quarto" if quarto_path() else "offline"
    if engine == "quarto" and not quarto_path():
        raise InputError(
            "quarto is not on PATH",
            where="report engine 'quarto'",
            fix=f"install Quarto (tested: {QUARTO_TESTED}; quarto.org) and put it on PATH, "
            "or render without it (--config report_engine=offline, or auto)",
        )
    return engine


def build_page(kind: str, inputs: Mapping):
    """The :class:`~.page.Page` of ``kind`` (``study`` or ``index``) from its inputs (the keyword
    arguments of its page function)."""
    function = {"study": study_page, "index": overview_page}.get(kind)
    if function is None:
        raise InputError(f"unknown page {kind!r}", fix="use 'study' or 'index'")
    params = inspect.signature(function).parameters
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in inputs]
    unknown = [n for n in inputs if n not in params]
    if missing or unknown:
        problems = (("needs the input(s)", missing), ("takes no input", unknown))
        raise InputError(
            f"the {kind} page " + "; ".join(f"{what} {', '.join(names)}" for what, names in problems if names),
            where=", ".join(missing + unknown),
            fix=f"give exactly the arguments of {function.__module__}.{function.__name__} (rules/report.smk passes them)",
        )
    return function(**inputs)


def render_page(
    kind: str,
    out: str | Path,
    inputs: Mapping,
    *,
    engine: str = "auto",
    log_file=None,
    timeout: int = 1200,
    output_fix: str = OUTPUT_FIX,
) -> str:
    """Write the page ``kind`` (``study`` or ``index``) to ``out``; returns the engine used.

    Parameters
    ----------
    kind : {"study", "index"}
        The page: :func:`~.study.study_page` or :func:`~.overview.overview_page`.
    out : path
        The HTML file to write (atomically: a failure leaves the previous page, or none).
    inputs : mapping
        The page function's arguments: paths, lists of paths, words (the report rule's inputs and params).
    engine : {"auto", "quarto", "offline"}
        The renderer (config ``report_engine``).
    log_file : path, optional
        The log that holds Quarto's output (the rule's log), named by a Quarto failure; without
        one, a failed Quarto render leaves its output in ``<out>.quarto.log``.
    timeout : int
        Seconds Quarto may take.
    output_fix : str
        What to do when the page cannot be written.
    """
    used = choose_engine(engine)
    out = Path(out).resolve()
    log.info("rendering the %s page with %s", kind, used)
    page = build_page(kind, inputs)
    if used == "offline":
        text = page.html()
        _write(out, lambda part: part.write_text(text, encoding="utf-8"), output_fix)
    else:
        render_quarto(SOURCES[kind], out, page.markdown(), timeout=timeout, log_file=log_file, output_fix=output_fix)
    log.info("rendered %s with %s -> %s", out.name, used, out)
    return used


def _write(out: Path, write, output_fix: str) -> None:
    try:
        with atomic_path(out) as part:
            write(part)
    except OSError as err:
        raise FmatError(
            f"cannot write the page: {err.strerror or err}",
            where=str(out),
            fix=output_fix + "; no page was written (a previous one is kept)",
        ) from None


def page_document(source: str | Path, markdown: str) -> str:
    """A Quarto markdown document: the front matter of ``source`` (``reports/study.qmd`` or
    ``index.qmd``: its title and HTML format) less :data:`BY_HAND_KEYS`, then ``markdown``."""
    text = Path(source).read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        raise InputError(f"no YAML front matter in {source}", where=str(source), fix="start the document with its --- header")
    header = {k: v for k, v in yaml.safe_load(match.group(1)).items() if k not in BY_HAND_KEYS}
    return "---\n" + yaml.safe_dump(header, allow_unicode=True, sort_keys=False) + "---\n\n" + markdown


def render_quarto(
    source: str | Path,
    out: str | Path,
    markdown: str,
    *,
    timeout: int = 1200,
    log_file=None,
    output_fix: str = OUTPUT_FIX,
) -> None:
    """``quarto render page.md --to html --output NAME``: ``markdown`` under the front matter of
    ``source`` (:func:`page_document`), rendered by Quarto's markdown engine (no kernel) in a
    temporary folder, the page written atomically to ``out``.

    Raises
    ------
    fmat.errors.RenderError
        Quarto failed or ran past ``timeout`` seconds: its own error lines and where all of its output is.
    """
    source, out = Path(source).resolve(), Path(out).resolve()
    if not source.is_file():
        raise InputError(
            f"no Quarto document {source}",
            where=str(source),
            fix="the report documents are reports/study.qmd and reports/index.qmd of the repository",
        )
    quarto = quarto_path() or "quarto"
    with _terminate_as_exit(), tempfile.TemporaryDirectory(prefix="fmat-page-") as work:
        work = Path(work)
        (work / "page.md").write_text(page_document(source, markdown), encoding="utf-8")
        name = f"{out.stem}.html"
        cmd = [quarto, "render", "page.md", "--to", "html", "--output", name]
        log.info("running %s (%s)", " ".join(cmd), _quarto_version(quarto))
        returncode, lines, timed_out = _run(cmd, work, timeout)
        produced = work / name
        if returncode == 0 and produced.is_file():
            _write(out, lambda part: shutil.copyfile(produced, part), output_fix)
            return
    where = Path(log_file) if log_file else out.with_name(out.name + ".quarto.log")
    if not log_file:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("\n".join(lines) + "\n", encoding="utf-8")
    why = f"stopped after {timeout} s" if timed_out else "no page written" if returncode == 0 else f"exit status {returncode}"
    raise RenderError(
        f"Quarto could not render {source.name} ({why}); Quarto says:\n"
        + (quarto_error(lines) or "    (nothing)")
        + f"\n  Quarto's full output: {where}",
        where=str(source),
        fix="read Quarto's output above; to render without Quarto: --config report_engine=offline "
        "(docs/reports.md, 'With or without Quarto')",
    )


def _quarto_version(quarto: str) -> str:
    try:
        return subprocess.run([quarto, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def quarto_error(lines: list[str], head: int = 8, tail: int = 3) -> str:
    """The first lines of Quarto's own error, from its first 'ERROR' line or its "An error
    occurred while executing" report (a cell that raised), and the last lines it wrote (a
    traceback ends with the exception); the last lines only when neither is found."""
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(("ERROR", "An error occurred"))), None)
    rest = [ln.rstrip() for ln in lines[start or 0 :] if ln.strip()]
    if start is None:
        chosen = rest[-(head + tail) :]
    else:
        chosen = rest[:head] + ["..."] + rest[-tail:] if len(rest) > head + tail else rest
    return "\n".join(f"    {ln}" for ln in chosen)


def _run(cmd: list[str], cwd: Path, timeout: float) -> tuple[int, list[str], bool]:
    """Run Quarto in ``cwd``, its output into ``cwd/quarto.log`` (then logged); returns (exit
    status, lines, timed out?). Past ``timeout`` seconds, on Ctrl-C or SIGTERM, Quarto gets
    SIGTERM (it cleans up) and the exception goes on; SIGKILL only if it still runs 10 s later."""
    timed_out = False
    with open(cwd / "quarto.log", "w", encoding="utf-8") as output:
        proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.poll() is None:  # past its time, Ctrl-C, SIGTERM: Quarto's own clean-up, then it ends
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    text = (cwd / "quarto.log").read_text(encoding="utf-8", errors="replace")
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in text.splitlines()]  # Quarto writes in colour
    for line in lines:
        log.info("quarto: %s", line.rstrip())
    return proc.returncode, lines, timed_out


class _Terminated(SystemExit):
    """SIGTERM during a render (a job killed by Snakemake or a cluster, `timeout`, `kill`)."""


@contextlib.contextmanager
def _terminate_as_exit():
    """Inside the block SIGTERM raises SystemExit(143) in the main thread, as Ctrl-C raises
    KeyboardInterrupt, so that Quarto and the temporary folder are cleaned up; elsewhere, or when
    SIGTERM already has someone else's handler, nothing changes."""
    in_main = threading.current_thread() is threading.main_thread()
    if not in_main or signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
        yield
        return

    def handler(signum, frame):
        raise _Terminated(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
