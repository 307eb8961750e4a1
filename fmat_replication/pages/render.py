"""Writing a report page (rules report_study, report_index): with Quarto, or without it.

:func:`render_page` takes a page's inputs (the files its rule declares, lists as lists) and writes
``results/reports/{study,index}.html``:

- **offline** (default when ``quarto`` is not on PATH; config ``report_engine: offline``): the
  page function (:func:`~fmat_replication.pages.study.study_page`,
  :func:`~fmat_replication.pages.overview.overview_page`) builds the
  :class:`~fmat_replication.pages.page.Page`, and :meth:`Page.html` writes it. No notebook, no
  kernel: plain Python in this process.
- **quarto**: ``quarto render reports/{study,index}.qmd`` with the inputs as its parameters (a
  YAML file: lists stay lists, strings stay strings); the document's one ``output: asis`` cell
  prints the same Page as markdown (:meth:`Page.markdown`).

Quarto runs with ``QUARTO_PYTHON`` set to this Python, a ``python3`` kernel spec of this Python
first on ``JUPYTER_PATH`` (a user's own ``python3`` kernel does not start instead; ``fmat`` and
``fmat_replication`` are installed in it, README "Installing"), a private ``TMPDIR``
removed however the render ends, in its own process group (stopped at once on Ctrl-C, SIGTERM or
past ``timeout``). A failure quotes Quarto's own error and names the log holding all it wrote.
Either way the page is written atomically (:func:`fmat.io.atomic_path`).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
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
    """The :class:`~fmat_replication.pages.page.Page` of ``kind`` (``study`` or ``index``) from its
    inputs (the keyword arguments of its page function)."""

    function = {"study": study_page, "index": overview_page}.get(kind)
    if function is None:
        raise InputError(f"unknown page {kind!r}", fix="use 'study' or 'index'")
    params = inspect.signature(function).parameters
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in inputs]
    unknown = [n for n in inputs if n not in params]
    if missing or unknown:
        raise InputError(
            f"the {kind} page "
            + "; ".join(
                part
                for part in (
                    f"needs the input(s) {', '.join(missing)}" if missing else "",
                    f"takes no input {', '.join(unknown)}" if unknown else "",
                )
                if part
            ),
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
    cwd: str | Path | None = None,
    output_fix: str = OUTPUT_FIX,
) -> str:
    """Write the page ``kind`` (``study`` or ``index``) to ``out``; returns the engine used.

    Parameters
    ----------
    kind : {"study", "index"}
        The page: :func:`~fmat_replication.pages.study.study_page` or
        :func:`~fmat_replication.pages.overview.overview_page`.
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
    cwd : path, optional
        The folder relative paths resolve in (default: the current folder).
    output_fix : str
        What to do when the page cannot be written.
    """
    used = choose_engine(engine)
    out = Path(out).resolve()
    log.info("rendering the %s page with %s", kind, used)
    if used == "offline":
        text = build_page(kind, inputs).html()
        _write(out, lambda part: part.write_text(text, encoding="utf-8"), output_fix)
    else:
        render_quarto(SOURCES[kind], out, inputs, cwd=cwd, timeout=timeout, log_file=log_file, output_fix=output_fix)
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


def yaml_params(params: Mapping) -> dict:
    """Parameters as YAML holds them: paths as strings, lists as lists, mappings (a page's
    ``inputs``) as mappings, None, booleans and numbers as they are."""

    def plain(v):
        if isinstance(v, Mapping):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if v is None or isinstance(v, (bool, int, float)):
            return v
        return str(v)

    return {str(k): plain(v) for k, v in params.items()}


# ---------------------------------------------------------------------------------------
# Quarto
# ---------------------------------------------------------------------------------------


def kernel_spec(python: str | None = None) -> dict:
    """The ``python3`` kernel Quarto starts: this interpreter (``python``, default
    :data:`sys.executable`) running ipykernel; ``fmat_replication`` is installed in it."""
    return {
        "argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (fmat)",
        "language": "python",
        "metadata": {"debugger": False},
    }


def write_kernel(folder: Path) -> Path:
    """Write :func:`kernel_spec` as ``folder/kernels/python3/kernel.json``; returns ``folder``
    (to put first on ``JUPYTER_PATH``)."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps(kernel_spec(), indent=1), encoding="utf-8")
    return folder


def quarto_env(tmp: Path) -> dict:
    """Quarto's environment: this Python for its Jupyter (``QUARTO_PYTHON``, and a ``python3``
    kernel spec of it first on ``JUPYTER_PATH``), no colours, and a temporary folder inside
    ``tmp`` (whatever Quarto or Jupyter put there goes with it)."""
    env = dict(os.environ)
    jupyter = write_kernel(tmp / "jupyter")
    private = tmp / "tmp"
    private.mkdir()
    env.update(
        {
            "QUARTO_PYTHON": sys.executable,  # Quarto's Jupyter: this Python, not the first python3 on PATH
            "JUPYTER_PATH": os.pathsep.join(p for p in (str(jupyter), env.get("JUPYTER_PATH", "")) if p),
            "NO_COLOR": "1",
            **{name: str(private) for name in ("TMPDIR", "TEMP", "TMP")},
        }
    )
    return env


def render_quarto(
    source: str | Path,
    out: str | Path,
    params: Mapping,
    *,
    cwd: str | Path | None = None,
    timeout: int = 1200,
    log_file=None,
    output_fix: str = OUTPUT_FIX,
) -> None:
    """``quarto render SOURCE`` with ``params`` (``--execute-params``, a YAML file), its cells run
    in ``cwd`` (default: the current folder), the page written atomically to ``out``.

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
    cwd = Path(cwd).resolve() if cwd else Path.cwd()
    with _terminate_as_exit(), tempfile.TemporaryDirectory(prefix="fmat-page-") as tmp:
        tmp = Path(tmp)
        work = tmp / "src"
        work.mkdir()
        src = work / source.name  # Quarto writes beside the document: keep reports/ clean, parallel renders apart
        shutil.copy2(source, src)
        params_file = tmp / "params.yml"
        params_file.write_text(yaml.safe_dump(yaml_params(params), allow_unicode=True), encoding="utf-8")
        name = f"{out.stem}.html"
        cmd = [
            quarto,
            "render",
            str(src),
            "--to",
            "html",
            "--output",
            name,
            "--execute-dir",
            str(cwd),
            "--execute-params",
            str(params_file),
        ]
        env = quarto_env(tmp)
        log.info("quarto: %s (%s), QUARTO_PYTHON=%s", quarto, _quarto_version(quarto), sys.executable)
        log.info("running %s", " ".join(cmd))
        returncode, lines, timed_out = _run(cmd, env, work, timeout)
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
    marks = ("ERROR", "An error occurred")
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(marks)), None)
    rest = [ln.rstrip() for ln in (lines[start:] if start is not None else lines) if ln.strip()]
    if start is None:
        chosen = rest[-(head + tail) :]
    elif len(rest) > head + tail:
        chosen = rest[:head] + ["..."] + rest[-tail:]
    else:
        chosen = rest
    return "\n".join(f"    {ln}" for ln in chosen)


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop a process started in its own session: SIGTERM to its group, SIGKILL after ``grace``."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _run(cmd: list[str], env: Mapping[str, str], cwd: Path, timeout: float) -> tuple[int, list[str], bool]:
    """Run Quarto in its own session, its output logged line by line ("quarto: ..."); returns
    (exit status, lines, timed out?). Past ``timeout`` seconds it is stopped; on Ctrl-C
    (KeyboardInterrupt) or any other exception it is stopped at once (its process group, with
    its kernel: SIGTERM, then SIGKILL), and the exception goes on."""
    lines: list[str] = []
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    timed_out = threading.Event()

    def expire():
        timed_out.set()
        _stop(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = re.sub(r"\x1b\[[0-9;]*m", "", line.rstrip("\n"))  # a kernel's traceback comes in colour
            lines.append(line)
            log.info("quarto: %s", line.rstrip())
        proc.wait()
    except BaseException:  # Ctrl-C: stop Quarto (and so its kernel) now, leave no page
        _stop(proc, grace=2.0)
        raise
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    return proc.returncode, lines, timed_out.is_set()


class _Terminated(SystemExit):
    """SIGTERM during a render (a job killed by Snakemake or a cluster, `timeout`, `kill`)."""


@contextlib.contextmanager
def _terminate_as_exit():
    """Inside the block SIGTERM raises SystemExit(143) in the main thread, as Ctrl-C raises
    KeyboardInterrupt: Quarto and its kernel are stopped and the private temporary folder is
    removed, instead of the process dying on the spot and leaving them. Elsewhere, or when
    SIGTERM already has someone else's handler, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
        signal.SIG_DFL,
        None,
    ):
        yield
        return

    def handler(signum, frame):
        raise _Terminated(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
