"""The context inspector: exactly the messages the next request will carry, section by section."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from ...core.api import ContextInspection, RecallSource, terminal_safe

HEADER_WIDTH = 44  # a message's header line fits the text pane at 80 columns


def section_text(messages: list[dict[str, Any]], count: Callable[[dict[str, Any]], int]) -> str:
    """Messages as plain text, each headed by its role and token count."""
    blocks = []
    for i, m in enumerate(messages, 1):
        head = f"── [{i}] {m.get('role')} · {count(m):,} tokens "
        extra = ""
        if m.get("tool_calls"):
            extra = "\ntool_calls: " + json.dumps(m["tool_calls"], ensure_ascii=False)
        if m.get("tool_call_id"):
            head += f"· tool_call_id {m['tool_call_id']} "
        blocks.append(head.ljust(HEADER_WIDTH, "─") + "\n" + terminal_safe(str(m.get("content") or "")) + extra)
    return "\n\n".join(blocks)


def recall_text(recalled: tuple[RecallSource, ...], last: tuple[RecallSource, ...], *, draft: bool) -> str:
    """Which logged lines recall put (or would put) into the request, and the words of the message that
    found each: what made a recall, so a surprising one can be understood."""

    def passages(sources: tuple[RecallSource, ...]) -> list[str]:
        return [f"  {s.label} — found by: {', '.join(s.terms) or '(no word recorded)'}" for s in sources]

    if recalled:
        parts = ["Recalled for your draft (at the end of the context note):", *passages(recalled)]
    elif draft:
        parts = ["Your draft recalls nothing."]
    else:
        parts = ["Recall is looked for when a message is sent (type a draft, then F2, to see what it recalls)."]
    if last:
        parts += ["", "The last message recalled:", *passages(last)]
    return "\n".join(parts)


def _layer_label(layer: str, first: bool) -> str:
    """The other system section than the prompt, the context note after the turn, holds the recalled
    lines."""
    if layer == "system":
        return "system" if first else "system + recall"
    return layer


class InspectorScreen(Screen[None]):
    """Built from the engine's :class:`~ccm_tui.core.service.controller.ContextInspection` of the next request."""

    BINDINGS = [
        Binding("escape,f2", "close", "Close", id="inspector.close"),
        Binding("y", "copy_section", "Copy section", id="inspector.copy"),
        Binding("w", "toggle_wrap", "Wrap long lines", id="inspector.wrap"),
    ]

    def __init__(self, inspection: ContextInspection, *, draft: bool) -> None:
        super().__init__()
        self.context = inspection.context
        self.tools = inspection.tool_defs
        self.budget = inspection.budget
        self.counter = inspection.counter
        self.draft = draft
        self.recalled = inspection.recalled
        self.last_recalled = inspection.last_recalled
        self.texts: list[str] = []

    def compose(self) -> ComposeResult:
        wc = self.context
        messages = len(wc.messages)
        share = wc.total / self.budget if self.budget else 0
        summary = Content.assemble(
            "The next request carries ",
            (f"{wc.total:,}", "bold"),
            f" tokens of the {self.budget:,} budget ",
            (f"({share:.0%})", "$accent"),
            f" in {messages} messages + {len(self.tools)} tool definitions. ",
            ("Naive context: ", "$foreground-muted"),
            (f"{wc.naive:,}", "$foreground-muted"),
            (
                " (with your draft as the new message)" if self.draft else " (shown with an empty new message)",
                "$foreground-muted",
            ),
            "\nLayers, as on the meter: ",
            (" · ".join(f"{name} {tokens:,}" for name, tokens in wc.layers.items() if tokens), "bold"),
            (
                " (the context note, last, holds the recall layer)",
                "$foreground-muted",
            ),
        )
        options: list[Option | None] = []
        for section in wc.sections:
            if options:
                options.append(None)
            options.append(
                Option(
                    Content.assemble(
                        (section.title, "bold"),
                        "\n",
                        (
                            f"{_layer_label(section.layer, section is wc.sections[0])} · {section.tokens:,} tokens · {len(section.messages)} msg",
                            "$foreground-muted",
                        ),
                    ),
                    id=f"section-{len(self.texts)}",
                )
            )
            self.texts.append(section_text(section.messages, self.counter.count_message))
            if section.layer == "system" and section is not wc.sections[0] and (self.recalled or self.last_recalled):
                options += [None, self._recall_option()]
        if self.tools:
            options.append(None)
            options.append(
                Option(
                    Content.assemble(
                        ("Tool definitions", "bold"),
                        "\n",
                        (f"tools · {wc.tools_tokens:,} tokens · {len(self.tools)} tools", "$foreground-muted"),
                    ),
                    id=f"section-{len(self.texts)}",
                )
            )
            self.texts.append(json.dumps(self.tools, ensure_ascii=False, indent=2))
        with Vertical(id="inspector"):
            yield Static("Context inspector — what the model will see", classes="screen-title")
            yield Static(summary, classes="screen-subtitle")
            with Horizontal(id="inspector-body"):
                yield OptionList(*options, id="inspector-sections")
                yield TextArea(
                    self.texts[0] if self.texts else "",
                    read_only=True,
                    soft_wrap=False,  # the lines as the model gets them (w wraps the long ones)
                    show_line_numbers=False,
                    id="inspector-text",
                )
        yield Footer()

    def _recall_option(self) -> Option:
        """The recall's own entry: its passages and the words that found them."""
        tokens = self.context.layers.get("recall", 0)
        detail = (
            f"recall · {tokens:,} tokens · {len(self.recalled)} passages" if self.recalled else "recall · last message"
        )
        option = Option(
            Content.assemble(("Recalled lines", "bold"), "\n", (detail, "$foreground-muted")),
            id=f"section-{len(self.texts)}",
        )
        self.texts.append(recall_text(self.recalled, self.last_recalled, draft=self.draft))
        return option

    def on_mount(self) -> None:
        sections = self.query_one("#inspector-sections", OptionList)
        sections.highlighted = 0
        sections.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        text = self.query_one("#inspector-text", TextArea)
        index = int(str(event.option.id).rsplit("-", 1)[1])
        text.load_text(self.texts[index])
        text.scroll_home(animate=False)

    def action_toggle_wrap(self) -> None:
        """Lines as sent (the system prompt's own line breaks, nothing re-wrapped), or long lines wrapped."""
        text = self.query_one("#inspector-text", TextArea)
        text.soft_wrap = not text.soft_wrap

    def action_copy_section(self) -> None:
        self.app.copy_to_clipboard(self.query_one("#inspector-text", TextArea).text)
        self.notify("Section copied to the clipboard")

    def action_close(self) -> None:
        self.dismiss(None)
