"""What a replayed session would be billed, for ccm-tui and for a naive chat, under three caching rules.

Every request of either side is a list of *blocks* (the tool definitions, then one block per message),
each with its token count and a fingerprint of its exact content. Per request we know the prefix it
shares with the same side's previous chat request (in tokens), and its cost in **input-price units**
(one unit = one uncached input token; output tokens are left out: both sides get the same replies):

* ``none`` — no prompt cache: every input token at 1×;
* ``openai`` — automatic caching: a prefix of at least 1,024 tokens shared with the previous request is
  read at ``OPENAI_READ`` (0.5×), counted in steps of 128 tokens past the first 1,024, as OpenAI does;
* ``anthropic`` — 5-minute ``cache_control`` caching: each breakpoint a request sets stores the prefix up
  to it (when it has at least 1,024 tokens); a later request reads the longest stored prefix that ends
  at one of its breakpoints or up to 20 blocks before one, at 0.1×, and writes the rest up to its last
  breakpoint at 1.25×; the rest costs 1×. A stored prefix expires 5 minutes (of the transcript's time,
  when it has timestamps) after it was last written or read. The blocks are taken in the order the
  provider receives them (tools, every system message, then the others: litellm moves every system
  message into Anthropic's system prompt). ccm sets the breakpoints of
  :func:`~ccm_tui.core.efforts.working_context.cache_breakpoints`; the naive chat sets them as a
  well-configured client does: on the system prompt and on its last message.

The summaries and compaction checkpoints ccm asks for are requests too: billed at 1× under every rule.

``floor`` (beside the rules): what the same requests would cost were every block a side sent before read
at the cache price and every new one paid once at the input price, with no write premium and no expiry
— no placement of breakpoints does better under the Anthropic rule with these blocks; what it leaves is
the new text (each exchange once, the context note each turn) and the summaries.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RULES = ("none", "openai", "anthropic")
OPENAI_MIN = 1024
OPENAI_STEP = 128
OPENAI_READ = 0.5
ANTHROPIC_MIN = 1024
ANTHROPIC_READ = 0.1
ANTHROPIC_WRITE = 1.25
ANTHROPIC_TTL = 300.0  # seconds
LOOKBACK = 20  # blocks before a breakpoint the provider looks back for a stored prefix


def fingerprint(value: Any) -> str:
    """A short, stable fingerprint of a block's exact content."""
    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class Block:
    key: str
    tokens: int
    system: bool = False  # a system message (the Anthropic order puts it in the system prompt)
    text: str | None = None  # its text, when a prefix of it may be shared (token-level caches)


@dataclass
class Request:
    """One chat request: its blocks as sent and the indices (into ``blocks``) of its cache breakpoints."""

    blocks: list[Block]
    breakpoints: list[int] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.blocks)


@dataclass
class Bill:
    """What one request shared with its side's previous one and what it cost under each rule."""

    tokens: int
    shared: int
    cost: dict[str, float]
    carried: int = 0  # tokens of the blocks the previous request had too (wherever they stood)
    held: int = 0  # tokens of the previous request (the share of it this one repeats as its prefix)


def shared_prefix(a: Sequence[Block], b: Sequence[Block], count=None) -> int:
    """Tokens of the longest common prefix: the run of equal blocks at the start of both, and — with a
    ``count`` of tokens and the texts of the first two blocks that differ — their common start."""
    total = 0
    for x, y in zip(a, b, strict=False):
        if x.key != y.key:
            if count is not None and x.text and y.text:
                same = 0
                for p, q in zip(x.text, y.text, strict=False):
                    if p != q:
                        break
                    same += 1
                total += max(0, count.count_text(y.text[:same]) - 1) if same else 0
            break
        total += x.tokens
    return total


def openai_cached(shared: int) -> int:
    """The tokens OpenAI's automatic cache reads of a shared prefix."""
    if shared < OPENAI_MIN:
        return 0
    return OPENAI_MIN + (shared - OPENAI_MIN) // OPENAI_STEP * OPENAI_STEP


class Side:
    """One side's requests (ccm or naive), billed as they come (``count``: a token counter, for the
    common start of two blocks that differ)."""

    def __init__(self, count=None) -> None:
        self.count = count
        self.previous: list[Block] = []
        self.store: dict[str, float] = {}  # Anthropic: prefix fingerprint → when it expires
        self.totals: dict[str, float] = {rule: 0.0 for rule in RULES}
        self.tokens = 0
        self.seen: set[str] = set()  # every block sent so far (the floor)
        self.floor = 0.0

    def bill(self, request: Request, now: float | None) -> Bill:
        shared = shared_prefix(self.previous, request.blocks, self.count)
        seen = {b.key for b in self.previous}
        carried = sum(b.tokens for b in request.blocks if b.key in seen)
        held = sum(b.tokens for b in self.previous)
        self.previous = list(request.blocks)
        for block in request.blocks:
            self.floor += block.tokens * (ANTHROPIC_READ if block.key in self.seen else 1.0)
            self.seen.add(block.key)
        total = request.tokens
        cost = {
            "none": float(total),
            "openai": total - openai_cached(shared) * (1 - OPENAI_READ),
            "anthropic": self._anthropic(request, now),
        }
        for rule in RULES:
            self.totals[rule] += cost[rule]
        self.tokens += total
        return Bill(tokens=total, shared=shared, cost=cost, carried=max(carried, shared), held=held)

    def bill_plain(self, tokens: int) -> None:
        """A side request that no cache helps (a summary): 1× under every rule."""
        for rule in RULES:
            self.totals[rule] += tokens
        self.tokens += tokens
        self.floor += tokens

    def _anthropic(self, request: Request, now: float | None) -> float:
        order = sorted(range(len(request.blocks)), key=lambda i: (not request.blocks[i].system, i))
        if request.blocks and order[0] != 0:  # the tool definitions stay first
            order.remove(0)
            order.insert(0, 0)
        blocks = [request.blocks[i] for i in order]
        position = {index: n for n, index in enumerate(order)}
        marks = sorted(position[i] for i in request.breakpoints if i in position)
        total = sum(b.tokens for b in blocks)
        if not marks:
            return float(total)
        prefix_tokens: list[int] = []
        keys: list[str] = []
        running, digest = 0, hashlib.blake2b(digest_size=12)
        for block in blocks:
            running += block.tokens
            digest.update(block.key.encode())
            prefix_tokens.append(running)
            keys.append(digest.copy().hexdigest())
        clock = now if now is not None else 0.0
        self.store = {k: t for k, t in self.store.items() if now is None or t > clock}
        hit = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK), -1):
                if keys[i] in self.store:
                    hit = max(hit, i)
                    break
        last = marks[-1]
        read = prefix_tokens[hit] if hit >= 0 else 0
        written = 0
        if prefix_tokens[last] >= ANTHROPIC_MIN:
            written = prefix_tokens[last] - read
        expires = clock + ANTHROPIC_TTL
        if hit >= 0:
            self.store[keys[hit]] = expires
        for mark in marks:
            if prefix_tokens[mark] >= ANTHROPIC_MIN:
                self.store[keys[mark]] = expires
        rest = total - read - written
        return rest + ANTHROPIC_READ * read + ANTHROPIC_WRITE * written


def message_blocks(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, count, split: int | None = None
) -> list[Block]:
    """A chat request as blocks: the tool definitions (one block, maybe empty), then each message — the
    first in two blocks when ``split`` says where its stable head ends (the hint goes on the head)."""
    blocks = [Block(fingerprint(tools or []), count.count_json(tools) if tools else 0)]
    for n, message in enumerate(messages):
        system = message.get("role") == "system"
        text = message.get("content") if isinstance(message.get("content"), str) else None
        if n == 0 and split and text:
            head = count.count_message({**message, "content": text[:split]})
            rest = count.count_message(message) - head
            blocks.append(Block(fingerprint(text[:split]), head, system, text[:split]))
            blocks.append(Block(fingerprint(text[split:]), rest, system, text[split:]))
            continue
        blocks.append(Block(fingerprint(message), count.count_message(message), system, text))
    return blocks


_WHEN = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?")


def turn_times(path: Path, start_lines: Sequence[int]) -> list[float | None] | None:
    """When each turn began, in seconds, read from the transcript's own lines (a JSONL record's
    ``timestamp``, a heading's date and time) at the turn's first line or the one before; None when fewer than half the
    turns have one (the cache then never expires). A turn without one, or one before its predecessor's,
    takes the previous turn's time."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    found: list[float | None] = []
    for start in start_lines:
        when = None
        for line in (lines[start - 1 : start] + lines[max(0, start - 2) : start - 1]) if start > 0 else []:
            match = _WHEN.search(line[:4000])
            if match is None:
                continue
            zone = match.group(3) or "Z"
            try:
                stamp = datetime.fromisoformat(f"{match.group(1)}T{match.group(2)}{'+00:00' if zone == 'Z' else zone}")
            except ValueError:
                continue
            when = stamp.astimezone(UTC).timestamp()
            break
        found.append(when)
    if sum(1 for t in found if t is not None) * 2 < len(found) or not found:
        return None
    out: list[float | None] = []
    last: float | None = None
    for t in found:
        if t is not None and (last is None or t >= last):
            last = t
        out.append(last)
    return out
