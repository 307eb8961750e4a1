"""Rendering reports: Quarto when it is installed, an offline path otherwise; the same page.

Report sources are Quarto percent-format Python scripts (``reports/<name>.py``): a YAML
header in the first markdown cell, ``# %%`` cells, and Quarto's cell options as ``#|``
lines at the top of a code cell (``#| tags: [parameters]`` marks the parameters cell).
Quarto renders them natively::

    quarto render reports/study.py -P study:2A --output 2A.html

Where the ``quarto`` binary is absent, the same source is rendered offline: jupytext reads
the script, :class:`CellOptions` turns the ``#|`` lines into the cell metadata Jupyter tools
read (tags), papermill injects the parameters and runs it, :class:`QuartoOutputs` applies
the options to the outputs (echo, output, include, warning), and nbconvert writes the page
with the template in ``fmat/templates/fmat_html`` (title block, table of contents, no CDN
script). Either way the result is one self-contained HTML file that reads offline, written
atomically (:func:`fmat.io.atomic_path`).

Cells print HTML with :func:`show`: a ``text/markdown`` output holding a pandoc raw HTML
block, which Quarto passes into the page verbatim and the offline path turns into HTML.
(A ``text/html`` output would make Quarto load require.js and jQuery from a CDN: it treats
any HTML output as a possible JavaScript widget.)
"""
from __future__ import annotations

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

from .errors import FmatError, InputError, RenderError

log = logging.getLogger(__name__)

ENGINES = ("auto", "quarto", "offline")
#: the Quarto release the reports are tested with (docs/reports.md)
QUARTO_TESTED = "1.7.34"
#: the ``#|`` cell options both renderers implement (Quarto's names and meanings)
CELL_OPTIONS = ("label", "tags", "echo", "output", "include", "warning")
#: modules the rendering needs (offline, and in the Python that Quarto runs), and the extra
#: of fmat that installs them
RENDER_MODULES = ("jupytext", "nbformat", "nbclient", "nbconvert", "papermill", "ipykernel", "IPython")
EXTRA = "workflow"
#: the nbconvert template of the offline path (``fmat/templates/fmat_html``)
TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = "fmat_html"
_CELL = re.compile(r"^# %%(.*)$")
_RAW_HTML = re.compile(r"\A(`{3,})\{=html\}\n(.*)\n\1\Z", re.S)


# ---------------------------------------------------------------------------------------
# Engines and dependencies
# ---------------------------------------------------------------------------------------

def quarto_path() -> str | None:
    """The ``quarto`` executable on PATH, or None."""
    return shutil.which("quarto")


def choose_engine(engine: str = "auto") -> str:
    """'quarto' if requested or (auto) available, else 'offline'."""
    if engine not in ENGINES:
        raise InputError(f"unknown report engine {engine!r}", fix=f"use one of {', '.join(ENGINES)}")
    if engine == "auto":
        return "quarto" if quarto_path() else "offline"
    if engine == "quarto" and not quarto_path():
        raise InputError("quarto is not on PATH", where="report engine 'quarto'",
                         fix=f"install Quarto (tested: {QUARTO_TESTED}; quarto.org) and put it on PATH, "
                             "or use the offline engine (engine 'offline', or 'auto')")
    return engine


def require_modules(modules=RENDER_MODULES) -> None:
    """Raise an :class:`FmatError` naming the extra to install when a rendering module is missing."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise FmatError(f"rendering a report needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                        f"not installed in this Python ({sys.executable})",
                        fix=f"pip install 'fmat[{EXTRA}]' (the report renderer: jupytext, papermill, nbconvert, "
                            "ipykernel), in the environment that runs fmat")


# ---------------------------------------------------------------------------------------
# The percent-format source
# ---------------------------------------------------------------------------------------

def split_cells(text: str) -> list[dict]:
    """Split a percent-format script into cells: ``{"header": str, "lines": [str]}``."""
    cells: list[dict] = []
    for line in text.splitlines():
        m = _CELL.match(line)
        if m:
            cells.append({"header": m.group(1).strip(), "lines": []})
        elif cells:
            cells[-1]["lines"].append(line)
        elif line.strip() and not line.startswith("#"):
            cells.append({"header": "", "lines": [line]})
    return cells


def front_matter(text: str) -> dict:
    """The YAML front matter of a percent-format source (first markdown cell)."""
    cells = split_cells(text)
    if not cells or "[markdown]" not in cells[0]["header"]:
        raise InputError("the first cell must be a '# %% [markdown]' cell holding the YAML header")
    body = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in cells[0]["lines"]]
    while body and not body[0].strip():
        body.pop(0)
    if not body or body[0].strip() != "---":
        raise InputError("the first markdown cell must start with '---' (YAML front matter)")
    try:
        end = next(i for i in range(1, len(body)) if body[i].strip() == "---")
    except StopIteration:
        raise InputError("the YAML front matter is not closed by '---'") from None
    meta = yaml.safe_load("\n".join(body[1:end])) or {}
    if not isinstance(meta, dict):
        raise InputError("the YAML front matter must be a mapping")
    return meta


def _n_option_lines(source: str) -> int:
    n = 0
    for line in source.splitlines():
        if not line.startswith("#|"):
            break
        n += 1
    return n


def cell_options(source: str) -> tuple[dict, int]:
    """The ``#|`` option lines at the top of a code cell's source, parsed as YAML as Quarto
    does, and how many lines they take. A line that is not YAML is an InputError."""
    lines = source.splitlines()
    n = _n_option_lines(source)
    if not n:
        return {}, 0
    try:
        parsed = yaml.safe_load("\n".join(ln[2:] for ln in lines[:n]))
    except yaml.YAMLError as err:
        raise InputError(f"the '#|' cell options are not YAML: {str(err).splitlines()[0]}",
                         fix="write one 'key: value' per '#|' line, e.g. '#| tags: [parameters]'") from None
    if not isinstance(parsed, dict):
        raise InputError("the '#|' cell options must be 'key: value' lines",
                         fix="e.g. '#| label: setup' or '#| tags: [parameters]'")
    return parsed, n


def _option_problems(opts: dict) -> list[str]:
    problems = []
    for key, value in opts.items():
        if key not in CELL_OPTIONS:
            problems.append(f"'#| {key}' is not a cell option both renderers implement ({', '.join(CELL_OPTIONS)})")
        elif key == "tags" and not (isinstance(value, list) and all(isinstance(t, str) for t in value)):
            problems.append(f"'#| tags' must be a list of strings, e.g. '#| tags: [parameters]', not {value!r}")
        elif key == "label" and re.match(r"(fig|tbl)-", str(value)):
            problems.append(f"'#| label: {value}': Quarto numbers and captions a fig-/tbl- cell ('Figure 1', "
                            "'(a)'), the offline page does not; use a label without that prefix")
        elif key == "output" and value not in (True, False):
            problems.append(f"'#| output: {value}': only true or false (print HTML with fmat.report.show)")
        elif key in ("echo", "include", "warning") and not isinstance(value, bool):
            problems.append(f"'#| {key}: {value}': true or false")
    return problems


def require_source(path: str | Path) -> Path:
    """``path`` if it is a file; else an InputError saying what, where and how to fix it."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no report source {path}" + (" (it is a folder)" if path.is_dir() else ""),
                         where=str(path), fix="give a percent-format report source, e.g. reports/study.py "
                                              "(the repository's reports/ folder)")
    return path


def check_source(path: str | Path) -> list[str]:
    """Structural check of a report source against Quarto's percent-format rules and what
    the offline renderer implements. Returns a list of problems (empty when fine).

    Checked: a YAML header in the first markdown cell with a title, ``format: html`` with
    ``embed-resources: true`` and no ``freeze``; every cell opened by a bare ``# %%`` or
    ``# %% [markdown]`` (cell metadata in the header reaches Quarto as strings: options go in
    ``#|`` lines); ``#|`` options only at the top of code cells, valid YAML, one of
    :data:`CELL_OPTIONS`; exactly one cell tagged ``parameters``.
    """
    path = require_source(path)
    text = path.read_text(encoding="utf-8")
    problems: list[str] = []
    try:
        meta = front_matter(text)
    except InputError as err:
        return [f"{path}: {err}"]
    if not meta.get("title"):
        problems.append(f"{path}: the YAML header has no title")
    html = (meta.get("format") or {}).get("html") if isinstance(meta.get("format"), dict) else None
    if not isinstance(html, dict) or html.get("embed-resources") is not True:
        problems.append(f"{path}: format.html.embed-resources must be true (self-contained HTML)")
    execute = meta.get("execute") or {}
    if "freeze" in execute or "freeze" in meta:
        problems.append(f"{path}: 'freeze' must not be set (reports always reflect the results)")
    n_param = 0
    for i, cell in enumerate(split_cells(text)):
        header = cell["header"]
        if header.startswith("[markdown]"):
            bad = [ln for ln in cell["lines"] if ln.strip() and not ln.startswith("#")]
            if bad:
                problems.append(f"{path}: markdown cell {i} has a line not commented with '#': {bad[0]!r}")
            continue
        if header:
            problems.append(f"{path}: cell {i}: '# %% {header}': Quarto reads metadata in the cell header as "
                            "strings (tags=[\"parameters\"] fails its validation); write '# %%' and put options "
                            "in '#|' lines at the top of the cell, e.g. '#| tags: [parameters]'")
        body = "\n".join(cell["lines"]).strip("\n")
        n_opts = _n_option_lines(body)
        if any(ln.startswith("#|") for ln in body.splitlines()[n_opts:]):
            problems.append(f"{path}: cell {i}: '#|' option after code (options go first)")
        try:
            opts, _ = cell_options(body)
        except InputError as err:
            problems.append(f"{path}: cell {i}: {err.message}")
            continue
        problems += [f"{path}: cell {i}: {p}" for p in _option_problems(opts)]
        if "parameters" in (opts.get("tags") or []):
            n_param += 1
    if n_param != 1:
        problems.append(f"{path}: expected exactly one code cell tagged 'parameters' ('#| tags: [parameters]'), "
                        f"found {n_param}")
    return problems


# ---------------------------------------------------------------------------------------
# What the cells call
# ---------------------------------------------------------------------------------------

def raw_html(text: str) -> dict:
    """A display bundle both renderers put into the page as raw HTML: ``text/markdown``
    holding a pandoc raw block (a fence longer than any backtick run in ``text``)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return {"text/markdown": f"{fence}{{=html}}\n{text}\n{fence}"}


def show(text: str) -> None:
    """Show ``text`` (HTML) in the report page, with Quarto and offline alike."""
    from IPython.display import display

    display(raw_html(str(text)), raw=True)


def page_path(path: str | Path) -> str:
    """A file's path as a page shows it: relative to the folder the report runs in, else
    its name only (a page holds no absolute local path)."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return p.name


# ---------------------------------------------------------------------------------------
# The kernel
# ---------------------------------------------------------------------------------------

def kernel_spec(python: str | None = None) -> dict:
    """The ``python3`` kernel both renderers start: this interpreter (``python``, default
    :data:`sys.executable`) running ipykernel, with this fmat importable (PYTHONPATH)."""
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {"argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (fmat)", "language": "python", "env": {"PYTHONPATH": path},
            "metadata": {"debugger": False}}


def write_kernel(folder: Path) -> Path:
    """Write :func:`kernel_spec` as ``folder/kernels/python3/kernel.json``; returns ``folder``,
    to put first on JUPYTER_PATH (Jupyter then finds this ``python3`` before a user's own)."""
    import json

    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps(kernel_spec(), indent=1), encoding="utf-8")
    return folder


def ipc_kernel_manager(prefix: Path, jupyter_path: Path | None = None):
    """A jupyter KernelManager class whose kernel talks over Unix sockets ``prefix-1`` ...
    instead of TCP ports on 127.0.0.1, its connection file ``prefix-connection-PID.json`` beside
    them. Reports rendered in parallel (Snakemake jobs, other
    users of the machine) then cannot collide on a port ("ZMQError: Address already in use",
    then "Kernel didn't respond in 60 seconds"), and the kernel is not reachable over TCP.
    With ``jupyter_path`` (from :func:`write_kernel`) the kernel spec is looked up there only."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from traitlets import default

    class IPCKernelManager(KernelManager):
        @default("transport")
        def _transport_default(self):
            return "ipc"

        @default("ip")
        def _ip_default(self):
            return str(prefix)

        @default("connection_file")
        def _connection_file_default(self):
            # beside the sockets, in the render's private folder (removed however the render ends),
            # not jupyter_client's tempfile.mkstemp() in $TMPDIR, which a Ctrl-C left behind
            # (mode 600, holding the dead kernel's key)
            return f"{prefix}-connection-{os.getpid()}.json"

    if jupyter_path is None:
        return IPCKernelManager

    class OwnKernelManager(IPCKernelManager):
        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self):
            return KernelSpecManager(kernel_dirs=[str(Path(jupyter_path) / "kernels")], ensure_native_kernel=False)

    return OwnKernelManager


# ---------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------

def render(source: str | Path, output: str | Path, params: Mapping[str, object] | None = None,
           *, engine: str = "auto", cwd: str | Path | None = None, timeout: int = 1200,
           log_file: str | Path | None = None, output_fix: str | None = None) -> str:
    """Render ``source`` to the self-contained HTML file ``output``; returns the engine used.

    ``params`` are the report's parameters (strings; Quarto ``--execute-params``, papermill
    offline). ``cwd`` is the folder the report runs in (relative paths in parameters resolve
    there). The renderer's own output is logged line by line (logger ``fmat.report``);
    ``log_file`` is the file the caller's logging writes it to (the rule's log), which a Quarto
    failure names; without it a failed Quarto render leaves its output in ``<output>.quarto.log``.
    The page is written atomically: a failure (or Ctrl-C, or a full disk) leaves no page,
    or the previous one. ``output_fix``: what to do when the page cannot be written (default:
    the ``fmat report`` command's words, ``-o``; the workflow gives its own).
    """
    from .io import atomic_path

    source, output = require_source(source).resolve(), Path(output).resolve()
    problems = check_source(source)
    if problems:
        raise InputError("report source is not valid percent-format Quarto:\n  " + "\n  ".join(problems),
                         where=str(source), fix="see docs/reports.md, 'Report sources'")
    used = choose_engine(engine)
    require_modules()
    params = {str(k): str(v) for k, v in (params or {}).items()}
    cwd = Path(cwd).resolve() if cwd else Path.cwd()
    with _terminate_as_exit(), tempfile.TemporaryDirectory(prefix="fmat-report-") as tmp:
        tmp = Path(tmp)
        page = tmp / "out" / f"{output.stem}.html"
        page.parent.mkdir()
        jupyter = write_kernel(tmp / "jupyter")
        log.info("rendering %s with %s", source.name, used)
        if used == "quarto":
            _render_quarto(source, page, params, cwd, timeout, tmp, jupyter, output, log_file)
        else:
            _render_offline(source, page, params, cwd, timeout, tmp, jupyter)
        try:
            with atomic_path(output) as part:
                shutil.copyfile(page, part)
        except OSError as err:
            raise FmatError(f"cannot write the page: {err.strerror or err}", where=str(output),
                            fix=(output_fix or "free disk space or choose a writable folder with -o")
                            + "; no page was written (a previous one is kept)") from None
    log.info("rendered %s with %s -> %s", source.name, used, output)
    return used


class _Terminated(SystemExit):
    """SIGTERM during a render (a job killed by Snakemake or a cluster, `timeout`, `kill`)."""


def _terminate_as_exit():
    """Inside the block SIGTERM raises SystemExit(143) in the main thread, as Ctrl-C raises
    KeyboardInterrupt: the renderer and its kernel are stopped and the private temporary folder
    (kernel sockets, connection file, the page in the making) is removed, instead of the process
    dying on the spot and leaving them in $TMPDIR. Elsewhere, or when SIGTERM already has a
    handler of someone else's, nothing changes."""
    import contextlib

    @contextlib.contextmanager
    def block():
        if threading.current_thread() is not threading.main_thread() or \
                signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            yield
            return

        def handler(signum, frame):
            raise _Terminated(128 + signal.SIGTERM)

        signal.signal(signal.SIGTERM, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return block()


def _private_tmp(env: dict, tmp: Path) -> dict:
    """``env`` with TMPDIR (and its kin) in the render's private folder: whatever the renderer,
    Jupyter or Quarto put in the temporary folder is removed with it, however the render ends."""
    folder = tmp / "tmp"
    folder.mkdir(exist_ok=True)
    env.update({"TMPDIR": str(folder), "TEMP": str(folder), "TMP": str(folder)})
    return env


def _quarto_version(quarto: str) -> str:
    try:
        return subprocess.run([quarto, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _quarto_error(lines: list[str], head: int = 8, tail: int = 3) -> str:
    """The first lines of Quarto's own error, from its first 'ERROR' line or its "An error
    occurred while executing" report (a cell that raised), and the last lines it wrote (a
    traceback ends with the exception); the last lines only when neither is found."""
    marks = ("ERROR", "An error occurred")
    start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(marks)), None)
    rest = [ln.rstrip() for ln in (lines[start:] if start is not None else lines) if ln.strip()]
    if start is None:
        chosen = rest[-(head + tail):]
    elif len(rest) > head + tail:
        chosen = rest[:head] + ["..."] + rest[-tail:]
    else:
        chosen = rest
    return "\n".join(f"    {ln}" for ln in chosen)


def _stop(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop a renderer started in its own session: SIGTERM to its group, SIGKILL after ``grace``."""
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


def _run(cmd: list[str], env: Mapping[str, str], cwd: Path, timeout: float, tag: str) -> tuple[int, list[str], bool]:
    """Run a renderer in its own session, its output (stdout and stderr) logged line by line
    as it comes ("<tag>: ..."); returns (exit status, lines, timed out?). Past ``timeout``
    seconds it is stopped; on Ctrl-C (KeyboardInterrupt) or any other exception it is stopped
    at once (its process group: SIGTERM, then SIGKILL), and the exception goes on."""
    lines: list[str] = []
    proc = subprocess.Popen(cmd, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
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
            line = _strip_ansi(line.rstrip("\n"))  # a kernel's traceback comes in colour
            lines.append(line)
            log.info("%s: %s", tag, line.rstrip())
        proc.wait()
    except BaseException:  # Ctrl-C: stop the renderer (and so its kernel) now, leave no page
        _stop(proc, grace=2.0)
        raise
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    return proc.returncode, lines, timed_out.is_set()


def _render_quarto(source: Path, page: Path, params: Mapping[str, str], cwd: Path, timeout: int, tmp: Path,
                   jupyter: Path, output: Path, log_file) -> None:
    quarto = quarto_path() or "quarto"
    work = tmp / "src"
    work.mkdir()
    src = work / source.name  # Quarto writes beside the source: keep reports/ clean, parallel renders apart
    shutil.copy2(source, src)
    params_file = tmp / "params.yml"
    params_file.write_text(yaml.safe_dump(dict(params), allow_unicode=True), encoding="utf-8")  # strings stay strings
    cmd = [quarto, "render", str(src), "--to", "html", "--output", page.name,
           "--execute-dir", str(cwd), "--execute-params", str(params_file)]
    env = dict(os.environ)
    env.update({
        "QUARTO_PYTHON": sys.executable,  # Quarto's Jupyter: this Python, not the first python3 on PATH
        "JUPYTER_PATH": os.pathsep.join(p for p in (str(jupyter), env.get("JUPYTER_PATH", "")) if p),
        "NO_COLOR": "1",
    })
    _private_tmp(env, tmp)
    log.info("quarto: %s (%s), QUARTO_PYTHON=%s", quarto, _quarto_version(quarto), sys.executable)
    log.info("running %s", " ".join(cmd))
    returncode, lines, timed_out = _run(cmd, env, work, timeout, "quarto")
    produced = work / page.name
    if returncode == 0 and produced.is_file():
        shutil.move(str(produced), page)
        return
    where = Path(log_file) if log_file else output.with_name(output.name + ".quarto.log")
    if not log_file:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("\n".join(lines) + "\n", encoding="utf-8")
    why = (f"stopped after {timeout} s" if timed_out else "no page written" if returncode == 0
           else f"exit status {returncode}")
    raise RenderError(f"Quarto could not render {source.name} ({why}); Quarto says:\n"
                      + (_quarto_error(lines) or "    (nothing)") + f"\n  Quarto's full output: {where}",
                      where=str(source),
                      fix="read Quarto's output above; to render without Quarto use the offline engine "
                          "(fmat report --engine offline; workflow: --config report_engine=offline); "
                          "docs/reports.md, 'When Quarto and the offline page differ'")


# ---------------------------------------------------------------------------------------
# The offline path
# ---------------------------------------------------------------------------------------

def _effective(opts: Mapping, execute: Mapping, key: str, default: bool) -> bool:
    return bool(opts.get(key, execute.get(key, default)))


def _offline_preprocessors():
    from nbconvert.preprocessors import Preprocessor

    class CellOptions(Preprocessor):
        """Before execution: a code cell's ``#|`` options into its metadata (``tags`` where
        papermill and nbconvert read them; all under ``metadata.quarto``)."""

        def preprocess_cell(self, cell, resources, index):
            if cell.cell_type == "code":
                opts, _ = cell_options(cell.source)
                cell.metadata["quarto"] = opts
                if opts.get("tags"):
                    cell.metadata["tags"] = list(dict.fromkeys([*cell.metadata.get("tags", []), *opts["tags"]]))
            return cell, resources

    class QuartoOutputs(Preprocessor):
        """After execution, Quarto's meaning of the options: ``include: false`` drops the cell,
        ``output: false`` its outputs, ``echo`` shows or hides its code, ``warning: false``
        drops what it wrote to stderr; :func:`raw_html` outputs become HTML."""

        def preprocess(self, nb, resources):
            execute = resources.get("fmat_execute") or {}
            kept = []
            for cell in nb.cells:
                if cell.cell_type != "code":
                    kept.append(cell)
                    continue
                opts = cell.metadata.get("quarto") or cell_options(cell.source)[0]
                if "injected-parameters" in cell.metadata.get("tags", []) or not _effective(opts, execute, "include", True):
                    continue
                if not _effective(opts, execute, "output", True):
                    cell.outputs = []
                if not _effective(opts, execute, "warning", True):
                    cell.outputs = [o for o in cell.outputs if not (o.output_type == "stream" and o.name == "stderr")]
                for out in cell.outputs:
                    data = out.get("data") or {}
                    m = _RAW_HTML.match(data.get("text/markdown", "")) if out.output_type == "display_data" else None
                    if m:
                        out["data"] = {"text/html": m.group(2)}
                cell.metadata.setdefault("transient", {})["remove_source"] = not _effective(opts, execute, "echo", True)
                kept.append(cell)
            nb.cells = kept
            return nb, resources

    return CellOptions, QuartoOutputs


def toc_entries(nb) -> list[dict]:
    """The table of contents of the offline page: the markdown cells' level-2 and -3 headings
    with the ids nbconvert gives them (rendered by nbconvert's own markdown filter)."""
    from xml.etree import ElementTree

    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    out = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            m = re.match(r"^(#{2,3})\s+\S", line)
            if not m:
                continue
            h = ElementTree.fromstring(markdown2html_mistune(line).strip())
            for a in h.findall("a"):  # nbconvert's anchor link (the pilcrow)
                h.remove(a)
            out.append({"level": len(m.group(1)), "id": h.get("id", ""), "text": "".join(h.itertext()).strip()})
    return out


def _render_offline(source: Path, page: Path, params: Mapping[str, str], cwd: Path, timeout: int, tmp: Path,
                    jupyter: Path) -> None:
    """The offline path in a worker process of its own (``python -m fmat.report JOB``), as
    Quarto runs in one: Ctrl-C or a timeout stops it (and its kernel) at once, where an
    in-process run would wait for the running cell to end."""
    import json

    job = tmp / "offline-job.json"
    error = tmp / "offline-error.json"
    job.write_text(json.dumps({"source": str(source), "page": str(page), "params": dict(params), "cwd": str(cwd),
                               "timeout": timeout, "tmp": str(tmp), "jupyter": str(jupyter), "error": str(error)}),
                   encoding="utf-8")
    env = _private_tmp(dict(os.environ), tmp)
    env["PYTHONPATH"] = kernel_spec()["env"]["PYTHONPATH"]  # this fmat, wherever it was imported from
    returncode, lines, timed_out = _run([sys.executable, "-m", "fmat.report", str(job)], env, cwd, timeout, "offline")
    if returncode == 0 and page.is_file():
        return
    if error.is_file():
        record = json.loads(error.read_text(encoding="utf-8"))
        cls = {"InputError": InputError, "RenderError": RenderError}.get(record["type"], FmatError)
        raise cls(record["message"], where=record.get("where"), fix=record.get("fix"))
    why = f"stopped after {timeout} s" if timed_out else f"exit status {returncode}"
    tail = "\n".join(f"    {ln}" for ln in lines[-8:] if ln.strip())
    raise RenderError(f"the offline renderer could not render {source.name} ({why}):\n{tail or '    (no output)'}",
                      where=str(source), fix="read the renderer's output above (the rule's log in the workflow)")


def _offline_worker(job_file: str) -> int:
    """``python -m fmat.report JOB``: run :func:`_render_offline_here` for a job written by
    :func:`_render_offline`; an :class:`FmatError` goes back as JSON, exit status 3."""
    import json

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    try:
        _render_offline_here(Path(job["source"]), Path(job["page"]), job["params"], Path(job["cwd"]),
                             int(job["timeout"]), Path(job["tmp"]), Path(job["jupyter"]))
    except FmatError as err:
        Path(job["error"]).write_text(json.dumps({"type": type(err).__name__, "message": err.message,
                                                  "where": err.where, "fix": err.fix}), encoding="utf-8")
        return 3
    return 0


def _render_offline_here(source: Path, page: Path, params: Mapping[str, str], cwd: Path, timeout: int, tmp: Path,
                         jupyter: Path) -> None:
    import jupytext
    import papermill
    from nbconvert import HTMLExporter
    from papermill.exceptions import PapermillExecutionError

    text = source.read_text(encoding="utf-8")
    meta = front_matter(text)
    execute = {k: v for k, v in (meta.get("execute") or {}).items() if k in CELL_OPTIONS}
    html_opts = ((meta.get("format") or {}).get("html") or {}) if isinstance(meta.get("format"), dict) else {}
    nb = jupytext.reads(text, fmt="py:percent")
    nb.cells = nb.cells[1:]  # the YAML header: the title block below
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["title"] = str(meta.get("title", ""))
    cell_opts, outputs = _offline_preprocessors()
    nb, _ = cell_opts().preprocess(nb, {})
    try:
        done = papermill.execute_notebook(
            nb, None, parameters=dict(params), kernel_name="python3", language="python",
            cwd=str(cwd), progress_bar=False, execution_timeout=timeout, log_output=False,
            kernel_manager_class=ipc_kernel_manager(tmp / "kernel", jupyter),
        )
    except PapermillExecutionError as err:
        opts, _ = cell_options(err.source)
        label = f" ('{opts['label']}')" if opts.get("label") else ""
        tail = "\n".join(f"    {ln}" for ln in _strip_ansi("\n".join(err.traceback)).splitlines()[-6:])
        raise RenderError(f"cell {err.exec_count}{label} of {source.name} raised {err.ename}: {err.evalue}\n{tail}",
                          where=str(source), fix="the parameters or the results the cell reads are not what it "
                                                 "expects; the traceback above names the line") from None
    exporter = HTMLExporter(template_name=TEMPLATE, extra_template_basedirs=[str(TEMPLATES)])
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    exporter.register_preprocessor(outputs, enabled=True)
    resources = {"fmat_execute": execute,
                 "fmat": {"title": str(meta.get("title", "")), "subtitle": str(meta.get("subtitle", "") or ""),
                          "toc": toc_entries(done) if html_opts.get("toc") else [],
                          "toc_title": str(html_opts.get("toc-title", "Table of contents"))}}
    body, _ = exporter.from_notebook_node(done, resources=resources)
    page.write_text(body, encoding="utf-8")


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


if __name__ == "__main__":  # the offline worker (_render_offline)
    sys.exit(_offline_worker(sys.argv[1]))
