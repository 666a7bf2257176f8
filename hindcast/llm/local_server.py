"""The embedded local model's OpenAI-compatible server, with nothing to compile.

`python -m hindcast.llm.local_server --model FILE.gguf --port N` loads the GGUF with
transformers (+ the pure-Python `gguf` reader; weights de-quantised to fp32 on load) and
answers `GET /v1/models` and `POST /v1/chat/completions` on 127.0.0.1, one request at a time.

Structured output: a `response_format` carrying a JSON schema (`{"type": "json_schema",
"json_schema": {"schema": …}}`, or llama.cpp's `{"type": "json_object", "schema": …}`) is
decoded under that schema: the server writes the JSON punctuation and the keys itself (the
required properties, in the schema's order) and the model chooses only the values, token by
token, among the tokens that keep the value valid (a number within `minimum`/`maximum`, a
string without a line break, `true`/`false`, an enum member, an array within `maxItems`).
So the answer always parses; a schema this decoder does not know is refused (HTTP 400).
Greedy at temperature 0 (the same answer on every run); at temperature > 0 it samples with
the request's `seed` (0 when none is given). `tools` are not supported (HTTP 400).

Speed without changing answers: a prompt is always fed in blocks of PREFILL_BLOCK tokens counted
from its start, and the model state after each whole block of a recent prompt is kept
(PREFIX_TOKENS at most), so a prompt that begins with the same blocks (the same system prompt,
the same question, a conversation that grew) starts from that state: the same computation, so
the same answer whether or not it was kept (`usage.prompt_tokens_details.cached_tokens` says how
many prompt tokens were not computed again). Tokens the decoder writes itself (JSON punctuation,
keys, the rest of an enum member) are fed together when the model is next asked, not one by one.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hindcast.errors import LocalServerRequest as RequestError
from hindcast.llm import converted

_NUMBER_PREFIX = re.compile(r"-?((0|[1-9]\d*)(\.\d*)?)?")
_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?")
_INTEGER_PREFIX = re.compile(r"-?(0|[1-9]\d*)?")
_STRING_CHARS = re.compile(r'[^"\\\x00-\x1f]*')
MAX_NUMBER_CHARS = 8  # "0.123456": more digits say nothing more and cost a model step each
TOP_CANDIDATES = 512  # tokens looked at (best first) for one that keeps a value valid
# Prompts are fed in blocks of this many tokens from their start (whatever is kept), so the model
# state after a block is the same computed or reused; 64: the leak judge's prompts of one market
# differ only in their last ~40 of ~570 tokens
PREFILL_BLOCK = 64
PREFIX_TOKENS = 8192  # model states kept for at most this many prompt tokens (~46 KB a token)


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    cached_tokens: int = 0


class Engine:
    """A GGUF loaded with transformers: chat prompts, free and schema-constrained decoding."""

    def __init__(self, gguf: str, n_ctx: int = 4096, n_threads: int = 1) -> None:
        from pathlib import Path

        import torch
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        torch.set_num_threads(max(1, int(n_threads)))
        self.torch, self.n_ctx = torch, int(n_ctx)
        self.tokenizer, self.model = converted.load(Path(gguf).resolve(), torch)
        self.pieces = self.tokenizer.batch_decode([[i] for i in range(len(self.tokenizer))])
        self.stops = {
            i
            for i in (
                self.tokenizer.eos_token_id,
                self.tokenizer.convert_tokens_to_ids("<|im_end|>"),
            )
            if isinstance(i, int) and i >= 0
        }
        # recent prompts (newest last) with each layer's keys and values after their prefill
        self.prefixes: list[tuple[list[int], list[tuple]]] = []

    def chat(
        self,
        messages: list[dict],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        schema: dict | None,
        json_only: bool,
    ) -> Generation:
        prompt = self._prompt(messages)
        if len(prompt) + max_tokens > self.n_ctx:
            raise RequestError(
                f"the request needs {len(prompt)} + {max_tokens} tokens, more than the "
                f"context ({self.n_ctx})"
            )
        with self.torch.inference_mode():  # the prefill too: kept states carry no graph
            decoder = _Decoder(self, prompt, max_tokens, temperature, seed)
            if schema is not None:
                decoder.value(schema)
                text, reason = decoder.text, "stop"
            else:
                text, reason = decoder.free("{" if json_only else "")
        return Generation(text, len(prompt), decoder.spent, reason, decoder.reused)

    def reusable(self, prompt: list[int]) -> tuple[int, list[tuple]]:
        """The most whole PREFILL_BLOCKs `prompt` shares with a kept prompt (leaving at least one
        token to feed), as (their token count, each layer's keys and values)."""
        best, states = 0, []
        for tokens, kept in self.prefixes:  # `tokens`: whole blocks
            limit = min(len(tokens), (len(prompt) - 1) // PREFILL_BLOCK * PREFILL_BLOCK)
            n = 0
            while n < limit and tokens[n : n + PREFILL_BLOCK] == prompt[n : n + PREFILL_BLOCK]:
                n += PREFILL_BLOCK
            if n > best:
                best, states = n, kept
        return best, states

    def keep(self, prompt: list[int], cache) -> None:
        """Keep the model state after `prompt` (whole blocks; the cache's tensors are never
        changed in place: a later token makes new ones), dropping the oldest beyond
        PREFIX_TOKENS."""
        states = [(layer.keys, layer.values) for layer in cache.layers]
        self.prefixes = [p for p in self.prefixes if p[0] != prompt] + [(prompt, states)]
        while len(self.prefixes) > 1 and sum(len(p[0]) for p in self.prefixes) > PREFIX_TOKENS:
            self.prefixes.pop(0)

    def _prompt(self, messages: list[dict]) -> list[int]:
        plain = [
            {
                "role": m.get("role")
                if m.get("role") in ("system", "user", "assistant")
                else "user",
                "content": _text(m.get("content")),
            }
            for m in messages
        ]
        ids = self.tokenizer.apply_chat_template(plain, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return [int(i) for i in ids]


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise RequestError("message content must be text")


class _Decoder:
    """One answer: the model's state after the prompt, fed token by token."""

    def __init__(
        self, engine: Engine, prompt: list[int], max_tokens: int, temperature: float, seed: int
    ) -> None:
        self.engine, self.budget, self.temperature = engine, int(max_tokens), float(temperature)
        self.generator = engine.torch.Generator().manual_seed(int(seed) & 0xFFFFFFFF)
        self.text, self.spent, self.cache, self._logits = "", 0, None, None
        self.pending: list[int] = []  # in the context, not yet fed to the model
        self._prefill(prompt)

    # -- the model ------------------------------------------------------------------------
    def _prefill(self, prompt: list[int]) -> None:
        """The prompt block by block from its start (the blocks a kept prompt shares, reused);
        its last block is fed with what the answer starts with (pending)."""
        self.reused, states = self.engine.reusable(prompt)
        if self.reused:
            from transformers import DynamicCache

            self.cache = DynamicCache(config=self.engine.model.config)
            for i, (keys, values) in enumerate(states):
                self.cache.update(keys[:, :, : self.reused], values[:, :, : self.reused], i)
        last = (len(prompt) - 1) // PREFILL_BLOCK * PREFILL_BLOCK
        for start in range(self.reused, last, PREFILL_BLOCK):
            self._feed(prompt[start : start + PREFILL_BLOCK])
        if self.cache is not None:
            self.engine.keep(prompt[:last], self.cache)
        self.pending = prompt[last:]

    def _feed(self, ids: list[int]) -> None:
        torch = self.engine.torch
        out = self.engine.model(
            input_ids=torch.tensor([ids]), cache=self.cache, use_cache=True, logits_to_keep=1
        )
        self.cache, self._logits = out.cache, out.logits[0, -1].float()

    @property
    def logits(self):
        """The model's scores for the next token (feeding what was written since, in one step)."""
        if self.pending:
            ids, self.pending = self.pending, []
            self._feed(ids)
        return self._logits

    def _take(self, token: int) -> None:
        self.text += self.engine.pieces[token]
        self.spent += 1
        self.pending.append(token)

    def force(self, literal: str) -> None:
        """Write `literal` (JSON punctuation, a key) into the answer and the model's context."""
        if literal:
            tokens = self.engine.tokenizer.encode(literal, add_special_tokens=False)
            self.spent += len(tokens)
            self.pending.extend(tokens)
            self.text += literal

    def _choose(self, accept) -> tuple[int | None, object]:
        """The best (or, at temperature > 0, a sampled) token among the best candidates that
        `accept(piece)` does not refuse (None); with the verdict."""
        torch = self.engine.torch
        top = torch.topk(self.logits, TOP_CANDIDATES)
        allowed = [
            (int(t), v)
            for t in top.indices.tolist()
            if (v := accept(self.engine.pieces[int(t)])) is not None
            and int(t) not in self.engine.stops
        ]
        if not allowed:
            return None, None
        if self.temperature <= 0:
            return allowed[0]
        ids = torch.tensor([t for t, _ in allowed])
        probs = torch.softmax(self.logits[ids] / self.temperature, dim=0)
        pick = int(torch.multinomial(probs, 1, generator=self.generator))
        return allowed[pick]

    @property
    def left(self) -> int:
        return self.budget - self.spent

    # -- free text ------------------------------------------------------------------------
    def free(self, start: str) -> tuple[str, str]:
        self.force(start)
        while self.left > 0:
            token = (
                int(self.engine.torch.argmax(self.logits))
                if self.temperature <= 0
                else self._sample()
            )
            if token in self.engine.stops:
                return self.text, "stop"
            self._take(token)
        return self.text, "length"

    def _sample(self) -> int:
        probs = self.engine.torch.softmax(self.logits / self.temperature, dim=0)
        return int(self.engine.torch.multinomial(probs, 1, generator=self.generator))

    # -- values under a schema --------------------------------------------------------------
    def value(self, schema: dict) -> None:
        kind = schema.get("type")
        if "enum" in schema:
            return self._choice([json.dumps(v) for v in schema["enum"]])
        if kind == "object":
            return self._object(schema)
        if kind == "array":
            return self._array(schema)
        if kind == "string":
            return self._string()
        if kind in ("number", "integer"):
            return self._number(schema, kind == "integer")
        if kind == "boolean":
            return self._choice(["true", "false"])
        raise RequestError(
            f"response_format schema: type {kind!r} is not supported by the local model server"
        )

    def _object(self, schema: dict) -> None:
        properties = schema.get("properties") or {}
        required = [k for k in properties if k in set(schema.get("required") or ())]
        self.force("{")
        for i, key in enumerate(required):
            self.force(("" if i == 0 else ", ") + json.dumps(key) + ": ")
            self.value(properties[key])
        self.force("}")

    def _array(self, schema: dict) -> None:
        low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
        self.force("[")
        n = 0
        while high is None or n < int(high):
            if n >= low and (self.left <= 8 or self._prefers("]", "," if n else '"')):
                break
            self.force(", " if n else "")
            self.value(schema.get("items") or {"type": "string"})
            n += 1
        self.force("]")

    def _prefers(self, end: str, go_on: str) -> bool:
        """Whether the model's next token is likelier to close than to go on."""
        enc = self.engine.tokenizer.encode
        a, b = enc(end, add_special_tokens=False)[0], enc(go_on, add_special_tokens=False)[0]
        return bool(self.logits[a] >= self.logits[b])

    def _choice(self, options: list[str]) -> None:
        """One of `options` (JSON literals), token by token: at each step the option whose next
        token the model ranks highest, until one option is left (then written out)."""
        enc, written = self.engine.tokenizer.encode, ""
        live = list(dict.fromkeys(options))
        while len(live) > 1:
            nexts = {
                o: enc(o[len(written) :], add_special_tokens=False)[0]
                for o in live
                if len(o) > len(written)
            }
            if not nexts:
                break
            best = max(nexts, key=lambda o: float(self.logits[nexts[o]]))
            piece = self.engine.pieces[nexts[best]]
            if not piece or not best.startswith(written + piece):
                live = [best]
                break
            self._take(nexts[best])
            written += piece
            live = [o for o in live if o.startswith(written)]
        self.force(live[0][len(written) :])

    def _string(self) -> None:
        """At most half of the tokens left, so that the values after it still get some."""
        self.force('"')
        stop_at = self.spent + max(8, self.left // 2)
        while self.left > 2 and self.spent < stop_at:
            token, closes = self._choose(_string_piece)
            if token is None or closes:
                break
            self._take(token)
        self.force('"')

    def _number(self, schema: dict, integer: bool) -> None:
        low, high = schema.get("minimum"), schema.get("maximum")
        prefix, pattern = "", _INTEGER_PREFIX if integer else _NUMBER_PREFIX
        while self.left > 1 and len(prefix) < MAX_NUMBER_CHARS:
            token, verdict = self._choose(
                lambda piece: _number_piece(prefix, piece, pattern, low, high)
            )
            if token is None or verdict == "end":
                break
            prefix += self.engine.pieces[token]
            self._take(token)
        if not _NUMBER.fullmatch(
            prefix
        ):  # the model gave no digit (or ended on "."): write a valid number
            self.force("0" if not prefix or prefix == "-" else "0" if prefix.endswith(".") else "")


def _string_piece(piece: str):
    """False: the piece continues the string; True: it closes it; None: refused."""
    if piece.startswith('"'):
        return True if piece.strip() in ('"', '",', '"}', '"]', '"]}', '"},') else None
    return False if piece and _STRING_CHARS.fullmatch(piece) else None


def _number_piece(prefix: str, piece: str, pattern, low, high):
    """ "go": the piece continues the number; "end": it ends it (the number so far is complete)."""
    if piece[:1] in (",", "}", "]", " ", "\n") and _NUMBER.fullmatch(prefix):
        return "end"
    text = prefix + piece
    if not piece or not pattern.fullmatch(text):
        return None
    if low is not None and low >= 0 and text.startswith("-"):
        return None
    if high is not None and _NUMBER.fullmatch(text) and float(text) > high:
        return None
    return "go"


# ---- HTTP -----------------------------------------------------------------------------------
def completion(engine: Engine, body: dict, alias: str) -> dict:
    """The chat.completion for one request body (RequestError: a refused request)."""
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        raise RequestError("messages: a non-empty list is required")
    if body.get("tools"):
        raise RequestError("tools are not supported by the local model server")
    schema, json_only = _format(body.get("response_format"))
    result = engine.chat(
        body["messages"],
        max_tokens=int(body.get("max_tokens") or 256),
        temperature=float(body.get("temperature", 0.0) or 0.0),
        seed=int(body.get("seed") or 0),
        schema=schema,
        json_only=json_only,
    )
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "model": alias,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": result.text},
                "finish_reason": result.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": result.cached_tokens},
        },
    }


def _format(fmt) -> tuple[dict | None, bool]:
    """(schema or None, JSON without a schema?) from a response_format."""
    if fmt is None or fmt.get("type") == "text":
        return None, False
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        if not isinstance(schema, dict):
            raise RequestError("response_format json_schema needs json_schema.schema")
        return schema, False
    if fmt.get("type") == "json_object":
        return (fmt["schema"], False) if isinstance(fmt.get("schema"), dict) else (None, True)
    raise RequestError(f"response_format type {fmt.get('type')!r} is not supported")


def make_handler(engine: Engine, alias: str):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet: the parent keeps only a log tail for errors
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                return self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": alias, "object": "model", "owned_by": "local"}],
                    },
                )
            self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(
                    self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}"
                )
                with lock:
                    self._send(200, completion(engine, body, alias))
            except (RequestError, ValueError, TypeError, AttributeError) as exc:
                self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hindcast.llm.local_server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--model_alias", default="local")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int, default=4096)
    parser.add_argument("--n_threads", type=int, default=1)
    args = parser.parse_args(argv)
    engine = Engine(args.model, n_ctx=args.n_ctx, n_threads=args.n_threads)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(engine, args.model_alias))
    server.serve_forever()


if __name__ == "__main__":
    main()
