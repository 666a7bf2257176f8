"""The local model converted once: the GGUF's weights de-quantised to fp32, its config and its
tokenizer, saved with transformers and safetensors in a folder named by the GGUF's
sha256 and the versions that converted it. A later start loads that folder (about 3 s) instead
of parsing and de-quantising the GGUF again (about 20 s on an idle core, a minute under load).
The tensors are the same fp32 values, so the answers are the same (tested).

Where: `$HINDCAST_MODEL_CACHE`, else `$XDG_CACHE_HOME/hindcast/models`, else
`~/.cache/hindcast/models` (about 540 MB for SmolLM2-135M). `HINDCAST_MODEL_CACHE=off` converts
on every start. A folder appears whole or not at all (written beside it, then renamed). A cache
that cannot be written is skipped, and one that cannot be read is replaced, the reason on the
server's log: the model loads from the GGUF as it always did. The marker records the sha256 of
every file of the folder when it was saved; a start checks them before loading (1.3 s for the
538 MB of weights on a loaded 2-core EPYC, beside the 3–9 s load), so bytes damaged later (same
size or not) are found, the folder removed and converted again. A start also removes the hidden
`.<folder>.<pid>.partial` copies of processes no longer running (a save killed half-way); a
running process's copy is left alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from importlib import metadata
from pathlib import Path

from hindcast import environment

MARKER = "hindcast-converted.json"  # written last, inside the folder before its rename
VERSIONS = ("transformers", "gguf", "torch", "safetensors")


def cache_root() -> Path | None:
    """The folder holding converted models, or None when `HINDCAST_MODEL_CACHE=off`."""
    chosen = environment.value("HINDCAST_MODEL_CACHE")
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    xdg = environment.value("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "hindcast" / "models"


def source_key(gguf: Path) -> dict:
    """What a conversion depends on: the GGUF's bytes and the converting packages' versions."""
    return {"file": gguf.name, "sha256": file_sha256(gguf)} | {
        name: metadata.version(name) for name in VERSIONS
    }


def folder_for(root: Path, key: dict) -> Path:
    stamp = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return root / f"{Path(key['file']).stem}-{stamp}"


def load(gguf: Path, torch, log=None):
    """(tokenizer, model) of `gguf` in fp32: from the converted folder when there is a whole
    one, else from the GGUF (then saved for next time)."""
    log, root = log or sys.stderr, cache_root()
    if root is None:
        return _from_gguf(gguf, torch)
    remove_abandoned(root, log)
    key = source_key(gguf)
    folder = folder_for(root, key)
    if _whole(folder, key):
        try:
            _check_files(folder)
            loaded = _from_folder(folder, torch)
            print(f"local model: loaded the converted model from {folder}", file=log, flush=True)
            return loaded
        except Exception as exc:  # any unreadable cache: the GGUF is the source
            print(f"local model: {folder} could not be read ({exc}); from the GGUF", file=log)
            shutil.rmtree(folder, ignore_errors=True)  # replaced by this start's conversion
    tokenizer, model = _from_gguf(gguf, torch)
    try:
        _save(folder, key, tokenizer, model)
        print(f"local model: converted once into {folder}", file=log, flush=True)
    except Exception as exc:  # a cache that cannot be written never stops the model
        print(f"local model: not cached ({exc}); the next start converts again", file=log)
    return tokenizer, model


def _whole(folder: Path, key: dict) -> bool:
    """The folder's marker names this key and the files it was saved with."""
    marker = _marker(folder)
    return isinstance(marker.pop("files", None), dict) and marker == key


def _marker(folder: Path) -> dict:
    try:
        marker = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def _check_files(folder: Path) -> None:
    """Every file recorded at save time has the sha256 it had then (raises ValueError naming the
    first that does not)."""
    for name, recorded in sorted(_marker(folder)["files"].items()):
        if file_sha256(folder / name) != recorded:
            raise ValueError(f"{name} does not match the sha256 recorded when it was saved")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def remove_abandoned(root: Path, log) -> None:
    """Remove `.<name>.<pid>.partial` folders whose process is no longer running (a save killed
    half-way leaves one, hundreds of MB, that nothing else would ever remove)."""
    for partial in root.glob(".*.partial") if root.is_dir() else ():
        pid = partial.name.removesuffix(".partial").rpartition(".")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)
            print(f"local model: removed {partial} (its process {pid} has ended)", file=log)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _from_gguf(gguf: Path, torch):
    return _pretrained(str(gguf.parent), torch, gguf_file=gguf.name)


def _from_folder(folder: Path, torch):
    return _pretrained(folder, torch)


def _pretrained(where, torch, **source):
    """transformers' tokenizer and fp32 model from `where` (a GGUF's folder with `gguf_file`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(where, **source)
    model = AutoModelForCausalLM.from_pretrained(where, dtype=torch.float32, **source)
    return tokenizer, model.eval().requires_grad_(False)  # inference only: no graph, ever


def _save_model(folder: Path, model) -> None:
    """The config (without the GGUF quantisation note: the weights are plain fp32 now) and the
    weights (safetensors; the output matrix tied to the embeddings is stored once)."""
    import copy

    from safetensors.torch import save_model

    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _save(folder: Path, key: dict, tokenizer, model) -> None:
    """Write beside `folder`, then rename: a reader sees a whole folder or none. When another
    process renamed its own first, that one stays (the same bytes) and this copy goes."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = folder.parent / f".{folder.name}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        _save_model(partial, model)
        tokenizer.save_pretrained(partial)
        files = {p.name: file_sha256(p) for p in sorted(partial.iterdir()) if p.is_file()}
        (partial / MARKER).write_text(json.dumps(key | {"files": files}, sort_keys=True))
        if not _whole(folder, key):
            shutil.rmtree(folder, ignore_errors=True)  # an unfinished or unreadable one
            try:
                os.rename(partial, folder)
            except OSError:
                if not _whole(folder, key):  # not another process's whole copy: a real failure
                    raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
