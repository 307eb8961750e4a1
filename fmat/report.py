"""Rendering reports: Quarto when it is installed, an offline path otherwise.

Report sources are Quarto percent-format Python scripts (``reports/<name>.py``): a YAML
header in the first markdown cell, ``# %%`` cells, ``#|`` cell options, and a cell tagged
``parameters``. Quarto (>= 1.4) renders them natively::

    quarto render reports/study.py -P study:2A --output 2A.html

Where the ``quarto`` binary is absent (it cannot be installed on every machine), the same
source is rendered by jupytext (read the script) -> papermill (inject parameters, execute)
-> nbconvert (HTML, inputs hidden, figures embedded as data URIs). Either way the result is
one self-contained HTML file that reads offline.
"""
from __future__ import annotations

import html as html_lib
import logging
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping

import yaml

from .errors import InputError

log = logging.getLogger(__name__)

ENGINES = ("auto", "quarto", "offline")
_CELL = re.compile(r"^# %%(.*)$")


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
        raise InputError("quarto is not on PATH", fix="install Quarto >= 1.4, or use engine 'offline'")
    return engine


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
    body = [ln for ln in body]
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


def check_source(path: str | Path) -> list[str]:
    """Structural check of a report source against Quarto's percent-format rules.

    Returns a list of problems (empty when fine). Checked: a YAML header in the first
    markdown cell with a title, ``format: html`` with ``embed-resources: true`` and no
    ``freeze``; every cell opened by ``# %%`` (``[markdown]`` or code); ``#|`` options only
    at the top of code cells and valid YAML; exactly one cell tagged ``parameters``.
    """
    path = Path(path)
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
    cells = split_cells(text)
    n_param = 0
    for i, cell in enumerate(cells):
        header = cell["header"]
        if header.startswith("[markdown]"):
            bad = [ln for ln in cell["lines"] if ln.strip() and not ln.startswith("#")]
            if bad:
                problems.append(f"{path}: markdown cell {i} has a line not commented with '#': {bad[0]!r}")
            continue
        if header and not re.fullmatch(r'(tags=\[.*\]|\S.*=.*)?', header):
            problems.append(f"{path}: cell {i} has an unknown header {header!r}")
        if "parameters" in header:
            n_param += 1
        opts, in_opts = [], True
        for ln in cell["lines"]:
            if ln.startswith("#|"):
                if not in_opts:
                    problems.append(f"{path}: cell {i}: '#|' option after code (options go first)")
                opts.append(ln[2:].strip())
            elif ln.strip():
                in_opts = False
        if opts:
            try:
                parsed = yaml.safe_load("\n".join(opts))
                if not isinstance(parsed, dict):
                    raise ValueError
            except Exception:
                problems.append(f"{path}: cell {i}: '#|' options are not valid YAML key: value lines")
    if n_param != 1:
        problems.append(f"{path}: expected exactly one code cell tagged 'parameters', found {n_param}")
    return problems


# ---------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------

def render(source: str | Path, output: str | Path, params: Mapping[str, object] | None = None,
           *, engine: str = "auto", cwd: str | Path | None = None, timeout: int = 1200) -> str:
    """Render ``source`` to the self-contained HTML file ``output``; returns the engine used.

    ``params`` are the report's parameters (Quarto ``-P key:value``; papermill offline).
    ``cwd`` is the folder the report runs in (relative paths in parameters resolve there).
    """
    source, output = Path(source).resolve(), Path(output).resolve()
    problems = check_source(source)
    if problems:
        raise InputError("report source is not valid percent-format Quarto:\n  " + "\n  ".join(problems))
    used = choose_engine(engine)
    output.parent.mkdir(parents=True, exist_ok=True)
    params = dict(params or {})
    cwd = Path(cwd).resolve() if cwd else Path.cwd()
    if used == "quarto":
        _render_quarto(source, output, params, cwd, timeout)
    else:
        _render_offline(source, output, params, cwd, timeout)
    log.info("rendered %s with %s -> %s", source.name, used, output)
    return used


def _render_quarto(source: Path, output: Path, params: Mapping, cwd: Path, timeout: int) -> None:
    with tempfile.TemporaryDirectory(prefix="fmat-quarto-") as tmp:
        src = Path(tmp) / source.name
        shutil.copy2(source, src)
        cmd = [quarto_path() or "quarto", "render", str(src), "--to", "html",
               "--output", output.name, "--execute-dir", str(cwd)]
        for key, value in params.items():
            cmd += ["-P", f"{key}:{value}"]
        log.info("running %s", " ".join(cmd))
        subprocess.run(cmd, check=True, cwd=tmp, timeout=timeout)
        shutil.move(str(Path(tmp) / output.name), output)


def ipc_kernel_manager(prefix: Path):
    """A jupyter KernelManager class whose kernel talks over Unix sockets ``prefix-1`` ...
    instead of TCP ports on 127.0.0.1. Reports rendered in parallel (Snakemake jobs, other
    users of the machine) then cannot collide on a port ("ZMQError: Address already in use",
    then "Kernel didn't respond in 60 seconds"), and the kernel is not reachable over TCP."""
    from jupyter_client.manager import KernelManager
    from traitlets import default

    class IPCKernelManager(KernelManager):
        @default("transport")
        def _transport_default(self):
            return "ipc"

        @default("ip")
        def _ip_default(self):
            return str(prefix)

    return IPCKernelManager


def _render_offline(source: Path, output: Path, params: Mapping, cwd: Path, timeout: int) -> None:
    import jupytext
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    meta = front_matter(source.read_text(encoding="utf-8"))
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = nb.cells[1:]  # the YAML header becomes the title block below
    with tempfile.TemporaryDirectory(prefix="fmat-report-") as tmp:
        src, out = Path(tmp) / "in.ipynb", Path(tmp) / "out.ipynb"
        nbformat.write(nb, src)
        papermill.execute_notebook(
            str(src), str(out), parameters=dict(params), kernel_name="python3", language="python",
            cwd=str(cwd), progress_bar=False, execution_timeout=timeout, log_output=False,
            kernel_manager_class=ipc_kernel_manager(Path(tmp) / "kernel"),
        )
        done = nbformat.read(out, as_version=4)
    # Quarto cell options the offline path honours: echo (hidden by default, as execute.echo
    # false in our headers), and 'output: false'.
    for cell in done.cells:
        if cell.cell_type == "code" and "#| output: false" in cell.source:
            cell.outputs = []
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input = not bool((meta.get("execute") or {}).get("echo", False))
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(done)
    output.write_text(_finish_html(body, meta), encoding="utf-8")


def _finish_html(body: str, meta: Mapping) -> str:
    """Make nbconvert's page self-contained (no CDN scripts) and add the title block."""
    body = re.sub(r'<script[^>]*src="https?://[^"]*"[^>]*>\s*</script>', "", body)
    title = html_lib.escape(str(meta.get("title", "")))
    subtitle = html_lib.escape(str(meta.get("subtitle", "")))
    block = f'<header class="fmat-title"><h1>{title}</h1>'
    if subtitle:
        block += f'<p class="subtitle">{subtitle}</p>'
    block += "</header>"
    body = re.sub(r"<title>.*?</title>", f"<title>{title}</title>", body, count=1, flags=re.S)
    return re.sub(r"(<body[^>]*>)", r"\1" + block.replace("\\", "\\\\"), body, count=1)
