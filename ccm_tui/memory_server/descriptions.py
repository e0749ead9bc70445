"""What the tools and their parameters say to the model that calls them: when to use each, what comes back."""

from __future__ import annotations

SEARCH = (
    "Search the user's past conversations kept by ccm-tui: every effort (a topic the user worked on, with "
    "its summary and its full raw log — concluded ones included, and agent sessions imported from Claude "
    "Code, Codex CLI, Gemini CLI, opencode, aider and Cursor) and the ambient chat between efforts. Use it "
    "when the user refers to earlier work ('the bug we fixed last week', 'what did we decide about X') or "
    "when the answer may be in a past conversation, before asking the user again. It is a keyword search "
    "(BM25), not a semantic one: give the distinctive words the conversation would contain — names, error "
    "messages, file names, commands — rather than a question. Each hit gives its id, its state and date, "
    "the line numbers and the best lines of its log with the matched words in **; call read with that id "
    "and around_line for the lines around it."
)
SEARCH_ALL = " It covers every ccm-tui session unless session names one; each hit says its session."
QUERY = "Words to look for, e.g. 'refresh token middleware' or 'ECONNREFUSED 5432' (question words are ignored)."
SEARCH_LIMIT = "How many hits to return, best first (1-25; default 10)."
SEARCH_SESSION = (
    "Search only this session (its name as status lists them: up to 64 characters, no '/', '\\' or control "
    "character); default: every session."
)

READ = (
    "Read an effort's summary and raw log (by the id search or list gave), or the ambient chat (id "
    "'ambient'). With around_line — a line number from a search hit — it returns the lines around that "
    "line; otherwise a page of limit lines from offset. Lines are numbered from 1 as in the log file, each "
    "with its role (user, assistant, system); a note left with remember is a user line. Read-only."
)
READ_ID = "An effort id as search or list show it (lowercase letters, digits, '-'), or 'ambient' for the chat between efforts."
AROUND_LINE = "A line number (e.g. from a search hit): about limit lines centred on it are returned, instead of a page."
OFFSET = "The page's first line (1-based; default 1). Ignored with around_line."
PAGE_LIMIT = "How many lines to return (1-60; default 30)."

LIST = (
    "List the session's efforts, most recently used first: id, state (active, background, expanded, "
    "concluded, evicted), the turn it was last used in, its date, its log's length in lines, its name and "
    "the start of its summary. Use it to browse when you do not know what words to search for."
)
STATE = (
    "Only efforts in this state: 'open' (active or background), 'concluded' (expanded and evicted "
    "included), or one state; default 'any'."
)
LIST_LIMIT = "How many efforts to show (1-200; default 30)."
LIST_OFFSET = "How many efforts to skip, for the next page (default 0)."

STATUS = (
    "The session at a glance, as 'ccm-tui status' shows it: the turn, the open efforts (the active one "
    "marked), the expanded and concluded ones with their summaries, and the context figures (tokens in "
    "ccm-tui's model context against its budget, and the saving against a plain chat)."
)
STATUS_ALL = " Without a session: the sessions there are, with their efforts."
SESSION = (
    "The ccm-tui session: its name as status lists them without one (up to 64 characters, no '/', '\\' or "
    "control character)."
)

REMEMBER = (
    "Save a note in the user's ccm-tui memory so that it is found later — by you, by other agents and in "
    "ccm-tui: a decision, a fact, a result worth keeping beyond this conversation. It is appended to the "
    "log of the effort you name, or by default to the 'notes' effort (made on first use); nothing is "
    "overwritten, and search finds it at once. Write it self-contained (say what it is about): notes are "
    "found by their words."
)
NOTE = "The note (up to 20,000 characters)."
NOTE_EFFORT = "The effort to add it to (an id from search or list); leave it out for the 'notes' effort."

REOPEN = (
    "Reopen a concluded effort in the user's ccm-tui session: it becomes the open, active effort there (its "
    "log back in the context of ccm-tui's model, and the user's next messages in ccm-tui go to it). Use it "
    "only when the user asks to continue that topic in ccm-tui; to look at an effort, use read."
)
REOPEN_ID = "The concluded effort's id (from search or list)."


def instructions(*, all_sessions: bool, writes: bool) -> str:
    """The server's instructions (sent with initialize; clients put them before the tool list)."""
    parts = [
        "ccm-tui keeps the user's conversations as efforts — topics with a summary and their full raw log — "
        "and the chat between them, including sessions imported from other coding agents. When the user "
        "refers to earlier work, or an answer may be in a past conversation, call search with the words "
        "that conversation would contain, then read the hit's id around its line."
    ]
    if all_sessions:
        parts.append("Every session of the user is served: status without a session lists them.")
    if writes:
        parts.append(
            "remember saves a note for later (a decision, a fact); reopen continues an effort in ccm-tui — "
            "use them only when the user wants that."
        )
    return " ".join(parts)
