"""Network calls: every one has a timeout.

fmat goes online only to download: models (``fmat download``, the workflow's ``download_model``
rule), the criterion sources (:mod:`fmat_replication.criteria`) and the agreement pairs
(:mod:`fmat.agreement`). A server that accepts the connection and never answers (a stalled
proxy, a half-open firewall) must not hang a run: every request waits at most
:func:`timeout` seconds for the connection and for each read of the answer, then fails with a
message that says how to work offline.

The default is :data:`DEFAULT_TIMEOUT` seconds; ``$FMAT_NETWORK_TIMEOUT`` or the commands'
``--timeout`` change it (the workflow: ``hub_timeout``, ``criteria.download_timeout``). It
limits the wait for an answer, not a download's length: a file that keeps arriving is never cut off.
"""

from __future__ import annotations

import contextlib
import math
import os

from .errors import InputError

#: environment variable: seconds to wait for a server's answer (connection, each read)
TIMEOUT_ENV = "FMAT_NETWORK_TIMEOUT"
#: seconds, when neither an argument nor $FMAT_NETWORK_TIMEOUT says otherwise
DEFAULT_TIMEOUT = 30.0


def timeout(value: float | str | None = None) -> float:
    """The network timeout in seconds: ``value``, else ``$FMAT_NETWORK_TIMEOUT``, else
    :data:`DEFAULT_TIMEOUT`. Not a positive finite number: InputError naming where it came from.

    Examples
    --------
    >>> timeout(10), timeout("2.5")
    (10.0, 2.5)
    >>> timeout("soon")
    Traceback (most recent call last):
        ...
    fmat.errors.InputError: --timeout: 'soon' is not a number of seconds above 0
      fix: give the seconds to wait for a server's answer, e.g. 30
    """
    where = "--timeout"
    if value is None:
        value, where = os.environ.get(TIMEOUT_ENV), f"${TIMEOUT_ENV}"
        if value is None or not str(value).strip():
            return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(
            f"{value!r} is not a number of seconds above 0",
            where=where,
            fix=f"give the seconds to wait for a server's answer, e.g. {int(DEFAULT_TIMEOUT)}",
        )
    return seconds


@contextlib.contextmanager
def hub_timeouts(seconds: float | None = None):
    """Inside the block, every HTTP request huggingface_hub makes waits at most ``seconds``
    (:func:`timeout` by default) for the connection and for each read.

    huggingface_hub 2.x sends its API calls (``model_info``, ``list_repo_tree``) with no timeout
    through one shared httpx client: a request hook on it (``event_hooks``) caps them all, and
    ``HF_HUB_DOWNLOAD_TIMEOUT``/``HF_HUB_ETAG_TIMEOUT`` are set to ``seconds``. hf_xet (a separate
    client that neither reaches) is off, so every file comes over HTTP. All are restored after.

    Examples
    --------
    >>> from huggingface_hub import constants
    >>> with hub_timeouts(5) as seconds:
    ...     seconds, constants.HF_HUB_DOWNLOAD_TIMEOUT
    (5.0, 5.0)
    """
    from huggingface_hub import constants, get_session

    seconds = timeout(seconds)

    def bound(request) -> None:
        """Every phase of the request waits at most ``seconds`` (httpx's per-request timeout)."""
        limits = dict(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {
            phase: seconds if limits.get(phase) is None else min(float(limits[phase]), seconds)
            for phase in ("connect", "read", "write", "pool")
        }

    bound.fmat_bound = True  # type: ignore[attr-defined]
    client = get_session()
    hooks = client.event_hooks
    client.event_hooks = {"request": [*hooks["request"], bound], "response": hooks["response"]}
    saved = constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT, constants.HF_HUB_DISABLE_XET
    constants.HF_HUB_DOWNLOAD_TIMEOUT = constants.HF_HUB_ETAG_TIMEOUT = seconds
    constants.HF_HUB_DISABLE_XET = True
    try:
        yield seconds
    finally:
        constants.HF_HUB_DOWNLOAD_TIMEOUT, constants.HF_HUB_ETAG_TIMEOUT, constants.HF_HUB_DISABLE_XET = saved
        hooks = client.event_hooks
        client.event_hooks = {
            "request": [h for h in hooks["request"] if not getattr(h, "fmat_bound", False)],
            "response": hooks["response"],
        }


@contextlib.contextmanager
def hub_offline():
    """Inside the block huggingface_hub and transformers make no network request at all.

    Even with ``local_files_only`` huggingface_hub 2.x sends requests of its own (e.g. the
    agent-harness registry for its user agent) when a file is not in the cache; its offline
    switch (``constants.HF_HUB_OFFLINE``, what ``HF_HUB_OFFLINE=1`` sets) is on inside the block.

    Examples
    --------
    >>> from huggingface_hub import constants
    >>> with hub_offline():
    ...     constants.HF_HUB_OFFLINE
    True
    """
    from huggingface_hub import constants

    saved = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = saved


def is_timeout(err: BaseException) -> bool:
    """Did ``err`` (or what caused it) come from a server that did not answer in time?

    Examples
    --------
    >>> import socket
    >>> is_timeout(socket.timeout("timed out")), is_timeout(ValueError("bad"))
    (True, False)
    """
    for _ in range(10):
        if err is None:
            return False
        if isinstance(err, TimeoutError) or "Timeout" in type(err).__name__:
            return True
        reason = getattr(err, "reason", None)  # urllib's URLError wraps the socket's timeout
        err = reason if isinstance(reason, BaseException) and reason is not err else (err.__cause__ or err.__context__)
    return False
