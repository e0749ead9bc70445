"""A realistic Markdown reply of a given size (headings, lists, code, a table), shared by
``bench_stream.py`` and ``bare_stream_app.py``. Not a part of ccm-tui."""

from __future__ import annotations

LAST_LINE = "End of the streamed reply."


def section(n: int) -> str:
    code = "\n".join(f"    total_{i} = pool.acquire(timeout={i + 1})  # step {i} of section {n}" for i in range(8))
    rows = "\n".join(
        f"| pool_{n}_{i} | {10 * (i + 1)} | {i * 3 + n} ms | {'yes' if i % 2 else 'no'} |" for i in range(5)
    )
    return (
        f"## Section {n}: tuning the pool\n\n"
        f"The pool settings interact with the transaction mode, so the numbers of section {n} matter. "
        "Each client holds a connection only for the length of a transaction, which keeps the server busy "
        "and the clients waiting less.\n\n"
        f"- first, check `max_client_conn` (section {n})\n"
        "- then the **pool size**, against the server's `max_connections`\n"
        "- finally the timeouts: *query_wait_timeout* and *server_idle_timeout*\n\n"
        f"```python\ndef handler_{n}(pool):\n{code}\n    return total_0\n```\n\n"
        "| pool | size | wait | reserve |\n|------|------|------|---------|\n"
        f"{rows}\n\n"
    )


def markdown_reply(size: int) -> str:
    """About ``size`` characters of Markdown, ending with :data:`LAST_LINE`."""
    parts = ["# How to tune the connection pool\n\n"]
    n = 0
    while sum(map(len, parts)) < size - 40:
        n += 1
        parts.append(section(n))
    text = "".join(parts)[: max(0, size - len(LAST_LINE) - 2)]
    text = text.rsplit("\n\n", 1)[0] if "\n\n" in text else text
    if text.count("```") % 2:
        text += "\n```"
    return text + "\n\n" + LAST_LINE
