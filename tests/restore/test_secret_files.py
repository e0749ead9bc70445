"""Secrets stay home: the evidence search refuses credential, history and state files and redacts
secret-looking values from everything it returns — the CI-sized copy of
``benchmarks/secrets_campaign.py`` (a home of 66 secret files of 50 kinds and 17 project files with
planted values), through the fake OpenAI server as a scripted model calling every tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.core.models.litellm_client import LLMClient
from ccm_tui.restore import evidence as ev
from ccm_tui.restore.file_policy import refusal
from ccm_tui.restore.redaction import redact_text
from ccm_tui.restore.turns import Artifact, ParsedTranscript, TurnRound
from tests.helpers.hostile_home import PRINTED_IN_TRANSCRIPT, HostileHome, build_home, transcript_text
from tests.helpers.openai_server import call, text, tool_calls
from tests.helpers.restore_runs import MODEL, claude_record, restore, turn_reply

SEARCH_PATTERNS = ["password|secret|token|key|auth", "AKIA|gh[pos]_|sk[-_]|xox|eyJ|AIza|glpat", "BEGIN", "."]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HostileHome:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return build_home(tmp_path / "home")


def every_call(home: HostileHome) -> list[Any]:
    """read_file and search_file on every file, search_log with secret-hunting patterns, list_artifacts."""
    calls = [call("list_artifacts")]
    calls += [call("search_log", {"pattern": p, "context_lines": 10}) for p in SEARCH_PATTERNS]
    for path in home.secret_files + home.ordinary_files:
        calls.append(call("read_file", {"path": path}))
        calls += [call("search_file", {"path": path, "pattern": p}) for p in SEARCH_PATTERNS[:2]]
    return [call(c.name, c.arguments, id=f"c{n}") for n, c in enumerate(calls)]


def rounds_of(calls: list[Any], size: int = ev.MAX_CALLS_PER_ROUND) -> list[Any]:
    return [tool_calls(*calls[i : i + size]) for i in range(0, len(calls), size)]


def tool_answers(requests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every tool result the model was sent, by call id."""
    answers: dict[str, dict[str, Any]] = {}
    for body in requests:
        for message in body["messages"]:
            if message["role"] == "tool":
                answers[message["tool_call_id"]] = json.loads(message["content"])
    return answers


def assert_nothing_leaked(home: HostileHome, sent: str) -> None:
    leaked = [value for value in home.planted if value in sent]
    assert leaked == [], f"{len(leaked)} planted value(s) reached the model, e.g. {leaked[:3]}"
    read = [path for path, canary in home.canaries.items() if canary in sent]
    assert read == [], f"secret files reached the model: {read}"


async def test_a_model_calling_every_tool_gets_no_secret_file_and_no_planted_value(llm_server, home) -> None:
    assert len(home.secret_files) >= 60 and len(home.planted) >= 150
    parsed = ParsedTranscript(
        "claude-code", [TurnRound(1, ["why"], ["read"], 1, 2, [Artifact(p, "read", 2) for p in home.secret_files])]
    )
    tools = ev.EvidenceTools(transcript_text(home), parsed, ev.FileAccess(home.home, "--root ~"))
    calls = every_call(home)
    llm_server.push(*rounds_of(calls), text("done"))
    llm = LLMClient(MODEL, api_base=llm_server.base_url, timeout=30)

    result = await ev.gather_evidence(llm, tools, "SESSION: hostile", max_rounds=len(calls))

    requests = llm_server.chat_requests()
    sent = json.dumps(requests, ensure_ascii=False)
    assert_nothing_leaked(home, sent)
    answers = tool_answers(requests)
    assert len(answers) == len(calls)
    for c in calls:
        path = c.arguments.get("path") if isinstance(c.arguments, dict) else None
        if path in home.canaries:  # a secret file: refused, one line that says why
            error = answers[c.id]["error"]
            assert error.startswith(f"refused: {path}: it is ") and "\n" not in error
    for path, canary in home.readable_canaries.items():  # project files are read, their values redacted
        assert canary in sent, f"{path} was not read"
    assert "[redacted]" in sent
    listed = next(a for a in answers.values() if "artifacts" in a)
    assert not any(entry["readable_now"] for entry in listed["artifacts"])
    failed = sum(1 for answer in answers.values() if "error" in answer)
    assert failed == 3 * len(home.secret_files)  # read_file and two search_file calls each
    assert result.ended_by == ev.EvidenceEnd.NO_TOOL_CALLS
    assert result.describe() == (
        f"{len(calls)} tool call(s) ({failed} refused or failed) in {result.rounds} round(s), ended with an answer in text"
    )


def write_session(path: Path, home: HostileHome) -> Path:
    """A Claude Code session whose agent printed secret files (tool results carry their values)."""
    cwd = str(home.home / "project")
    records, parent = [], None
    for n, name in enumerate(PRINTED_IN_TRANSCRIPT[:8]):
        content = (home.home / name).read_text(encoding="utf-8")
        content = "\n".join(line for line in content.splitlines() if "CANARY" not in line)
        use = {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": str(home.home / name)}}
        records += [
            claude_record(f"u{n}", parent, "user", f"What is in {name}?", cwd),
            claude_record(f"a{n}", f"u{n}", "assistant", [use], cwd, message={"id": f"m{n}"}),
            claude_record(
                f"r{n}", f"a{n}", "user", [{"type": "tool_result", "tool_use_id": f"t{n}", "content": content}], cwd
            ),
            claude_record(
                f"b{n}", f"r{n}", "assistant", [{"type": "text", "text": content}], cwd, message={"id": f"n{n}"}
            ),
        ]
        parent = f"b{n}"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_restore_over_the_home_sends_no_secret_and_counts_its_calls(capsys, llm_server, home, tmp_path) -> None:
    calls = every_call(home)[:96]
    scripted = iter(rounds_of(calls))

    def model(body: dict[str, Any]):
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        if tools:
            return next(scripted, None) or text("- the token had expired (log)")
        if "SESSION SUMMARY" in body["messages"][0]["content"]:
            return text("SESSION SUMMARY\n\nSummary: rotated an expired token.")
        turn = body["messages"][-1]["content"].split("this is turn ", 1)[1].split(" ", 1)[0]
        return text(turn_reply(int(turn)))

    llm_server.responder = model
    transcript = write_session(tmp_path / "session.jsonl", home)
    rc, out, err = restore(
        capsys, llm_server, transcript, tmp_path / "ccm", "--root", str(home.home), "--max-searches", "20"
    )

    assert rc == 0, err
    assert_nothing_leaked(home, json.dumps(llm_server.chat_requests(), ensure_ascii=False))
    refused = sum(1 for c in calls if isinstance(c.arguments, dict) and c.arguments.get("path") in home.canaries)
    failed = sum(1 for a in tool_answers(llm_server.chat_requests()).values() if "error" in a)
    assert failed >= refused > 0
    assert (
        f"evidence: {len(calls)} tool call(s) ({failed} refused or failed) in 12 round(s), ended with an answer" in out
    )


def test_six_calls_are_counted_in_the_summary(capsys, llm_server, home, tmp_path) -> None:
    calls = [call("read_file", {"path": p}, id=f"x{n}") for n, p in enumerate(home.secret_files[:6])]
    answered = []

    def model(body: dict[str, Any]):
        if body.get("tools"):
            answered.append(1)
            return tool_calls(*calls) if len(answered) == 1 else text("nothing to add")
        if "SESSION SUMMARY" in body["messages"][0]["content"]:
            return text("SESSION SUMMARY\n\nSummary: looked at files.")
        turn = body["messages"][-1]["content"].split("this is turn ", 1)[1].split(" ", 1)[0]
        return text(turn_reply(int(turn)))

    llm_server.responder = model
    transcript = write_session(tmp_path / "session.jsonl", home)
    rc, out, err = restore(capsys, llm_server, transcript, tmp_path / "ccm")
    assert rc == 0, err
    assert "evidence: 6 tool call(s) (6 refused or failed) in 1 round(s), ended with an answer in text" in out
    assert "no tool calls" not in out


# ----------------------------------------------------------------------------- the rules, one by one
READABLE = [
    "src/app.py",
    "web/index.tsx",
    "README.md",
    "docs/guide.rst",
    "Makefile",
    "Dockerfile",
    "Dockerfile.dev",
    "LICENSE",
    "LICENSE-MIT",
    ".gitignore",
    ".github/workflows/ci.yml",
    "package.json",
    "package-lock.json",
    "Cargo.lock",
    "go.mod",
    "pyproject.toml",
    "setup.cfg",
    "config/app.yaml",
    "infra/main.tf",
    "scripts/deploy.sh",
    "src/tokenizer.json",
    "src/tokens.py",
    "src/auth/password_reset.py",
]
REFUSED = [
    ".envrc",
    ".env",
    ".env.example",
    "config/prod.env",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".lesshst",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    "prod.tfvars",
    ".pgpass",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    "id_ed25519",
    "id_rsa.pub",
    "server.pem",
    "tls.key",
    "cert.p12",
    "vault.kdbx",
    "credentials.json",
    "secrets.yaml",
    ".htpasswd",
    "app.sqlite",
    "data.db",
    "login.keychain-db",
    "cookies.txt",
    "token.json",
    "db_password.txt",
    "secrets.py",
    ".config/gh/hosts.yml",
    ".aws/credentials",
    ".kube/config",
    ".docker/config.json",
    ".gnupg/pubring.kbx",
    ".ssh/config",
    ".terraform/terraform.tfstate",
    ".vault/token.txt",
    ".idea/workspace.xml",
    "blob.bin",
    "archive.zip",
    "notes",
]


@pytest.mark.parametrize("relative", READABLE)
def test_source_and_text_files_are_readable(relative: str) -> None:
    assert refusal(relative, f"/home/u/proj/{relative}", "/home/u") is None


@pytest.mark.parametrize("relative", REFUSED)
def test_credential_history_state_and_unknown_files_are_refused(relative: str) -> None:
    reason = refusal(relative, f"/home/u/proj/{relative}", "/home/u")
    assert reason and reason.startswith("it is ") and "\n" not in reason


def test_a_root_inside_a_credential_directory_reads_nothing_there() -> None:
    assert "inside .config" in (refusal("hosts.yml", "/home/u/.config/gh/hosts.yml", "/home/u") or "")
    assert refusal("app.py", "/srv/.hidden/proj/app.py", "/home/u") is None  # outside the home: no dot rule
    assert refusal("app.py", "/home/u/work/proj/app.py", "/home/u") is None


SECRETS = {
    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzKEY": "wJalrXUtnFEMI",
    "key id AKIAIOSFODNN7EXAMPLE here": "AKIAIOSFODNN7EXAMPLE",
    'GITHUB_TOKEN="ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"': "ghp_aBcD",
    "  oauth_token: gho_16C7e42F292c6912E7710c838347Ae178B4a": "gho_16C7",
    "url = https://oauth2:glpat-abcdefghij0123456789@gitlab.com/x.git": "glpat-abc",
    "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx": "xoxb-",
    "stripe('sk_live_4eC39HqLyjWDarjtT1zdp7dc')": "sk_live_4eC3",
    "key: sk-proj-abcdefghijklmnopqrstuvwxyz012345": "sk-proj-abc",
    "x = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789'": "sk-ant-api03",
    "g = AIzaSyA1234567890abcdefghijklmnopqrstu": "AIzaSyA123",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U": "eyJhbGci",
    '{"password": "hunter2!"}': "hunter2",
    "db:\n  password: s3cr3tP4ss\n": "s3cr3tP4ss",
    "DATABASE_URL=postgres://app:Pg5ecret@db:5432/app": "Pg5ecret",
    "localhost:5432:app:app:PgPassLine9": "PgPassLine9",
    "    machine example.com login bob password NetRcPw7": "NetRcPw7",
    "<password>XmlPw9</password>": "XmlPw9",
    "mysql -u root -pMyS3cret app": "MyS3cret",
    "curl -u deploy:CurlPw1 https://x": "CurlPw1",
    "vault login --token=hvs.CAESIJabcdefghijklmnopqrstuvwxyz": "hvs.CAES",
    "APP_KEY=base64:Zm9vYmFyYmF6cXV4": "Zm9vYmFy",
    "MYSQL_ROOT_PASS: RootPw42": "RootPw42",
    'cs = "Server=db;Password=CsPw77;"': "CsPw77",
    "admin:$apr1$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV": "ABCDEFGHIJ",
}


@pytest.mark.parametrize("line, secret", list(SECRETS.items()))
def test_secret_looking_values_are_redacted(line: str, secret: str) -> None:
    redacted = redact_text(line)
    assert secret not in redacted and "[redacted]" in redacted
    assert redacted.count("\n") == line.count("\n")


def test_private_key_blocks_keep_their_line_count_and_stay_redacted() -> None:
    block = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdefgh\n-----END RSA PRIVATE KEY-----\nafter"
    once = redact_text(block)
    assert "MIIE" not in once and once.count("\n") == block.count("\n") and once.endswith("\nafter")
    assert redact_text(once) == once  # a result redacted again (every tool result is) loses nothing more


CODE = [
    "token = os.environ['TOKEN']",
    "password = None",
    "def login(password: str, token: Optional[str] = None):",
    "api_key=args.api_key",
    "self.token = token",
    "max_tokens = 700",
    "tokenizer = Tokenizer()",
    "password: ${DB_PASSWORD}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "Key outcomes: the token was rotated",
]


@pytest.mark.parametrize("line", CODE)
def test_references_and_code_stay(line: str) -> None:
    assert redact_text(line) == line
