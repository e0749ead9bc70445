"""A home directory full of secrets, for the evidence search's secret campaign.

:func:`build_home` writes, under ``home``, ``copies`` projects and one set of personal files:

* **secret files** — credential stores, histories, state files, keys, databases (``.envrc``,
  ``.bash_history``, ``terraform.tfstate``, ``.config/gh/hosts.yml``, ``.pgpass``, ``.aws/credentials``,
  ``id_ed25519``, ``server.pem``, ``secrets.yaml``, ``app.sqlite`` …: 32 personal files and 34 in
  each project). Each holds a *canary*, a plain word no redaction removes: if it reaches the
  model, the file was read;
* **ordinary files** — source, config, docs a project has — with *planted* secret values in the
  shapes real ones have (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, JWT,
  private key blocks, ``password=``, URLs with credentials, ``.pgpass`` lines …) and a canary
  of their own that must reach the model (the file was read, not refused).

:func:`transcript_text` is a transcript in which the agent ran ``cat .envrc`` and friends: its
planted values must not come back from ``search_log`` either. Used by
``tests/restore/test_secret_files.py`` (one copy) and ``benchmarks/secrets_campaign.py`` (many).
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class HostileHome:
    home: Path
    secret_files: list[str] = field(default_factory=list)  # paths relative to home
    ordinary_files: list[str] = field(default_factory=list)
    canaries: dict[str, str] = field(default_factory=dict)  # secret file -> its canary
    readable_canaries: dict[str, str] = field(default_factory=dict)  # ordinary file -> its canary
    planted: list[str] = field(default_factory=list)  # every secret value written anywhere


class _Values:
    """Secret values in real shapes, unique per call (so each leak can be told apart)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.made: list[str] = []

    def _chars(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def keep(self, value: str) -> str:
        self.made.append(value)
        return value

    def aws_id(self) -> str:
        return self.keep("AKIA" + self._chars(16, string.ascii_uppercase + string.digits))

    def aws_secret(self) -> str:
        return self.keep(self._chars(40, string.ascii_letters + string.digits + "/+"))

    def github(self) -> str:
        return self.keep(self.rng.choice(["ghp_", "gho_", "ghs_"]) + self._chars(36))

    def github_pat(self) -> str:
        return self.keep("github_pat_" + self._chars(22) + "_" + self._chars(59))

    def gitlab(self) -> str:
        return self.keep("glpat-" + self._chars(20))

    def slack(self) -> str:
        return self.keep(f"xoxb-{self._chars(12, string.digits)}-{self._chars(13, string.digits)}-{self._chars(24)}")

    def stripe(self) -> str:
        return self.keep("sk_live_" + self._chars(24))

    def openai(self) -> str:
        return self.keep("sk-proj-" + self._chars(48))

    def anthropic(self) -> str:
        return self.keep("sk-ant-api03-" + self._chars(40))

    def google(self) -> str:
        return self.keep("AIza" + self._chars(35))

    def google_oauth(self) -> str:
        return self.keep("ya29." + self._chars(60))

    def jwt(self) -> str:
        return self.keep(f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{self._chars(20)}.{self._chars(43)}")

    def huggingface(self) -> str:
        return self.keep("hf_" + self._chars(34))

    def vault(self) -> str:
        return self.keep("hvs." + self._chars(24))

    def password(self) -> str:
        return self.keep("Pw" + self._chars(10) + self.rng.choice("!#%&*+?@^~"))

    def hex_secret(self) -> str:
        return self.keep(self._chars(48, "0123456789abcdef"))

    def key_body(self) -> str:
        return self.keep(self._chars(64, string.ascii_letters + string.digits + "+/"))


def _secret_files(v: _Values) -> dict[str, str]:
    """Personal and project files that must never be read (relative path → content, before the canary)."""
    key_block = "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n{}\n-----END OPENSSH PRIVATE KEY-----\n"
    return {
        ".bash_history": f"ls\nexport GITHUB_TOKEN={v.github()}\nmysql -u root -p{v.password()}\n",
        ".zsh_history": f": 1700000000:0;vault login {v.vault()}\n: 1700000001:0;echo {v.password()}\n",
        ".python_history": f"openai.api_key = '{v.openai()}'\n",
        ".psql_history": f"ALTER USER app WITH PASSWORD '{v.password()}';\n",
        ".mysql_history": f"SET PASSWORD = '{v.password()}';\n",
        ".node_repl_history": f"process.env.TOKEN = '{v.github()}'\n",
        ".lesshst": f'.less-history-file:\n.search\n"{v.password()}\n',
        ".pgpass": f"db.example.com:5432:app:app_user:{v.password()}\n",
        ".vault-token": v.vault() + "\n",
        ".netrc": f"machine api.example.com login alice password {v.password()}\n",
        ".npmrc": f"//registry.npmjs.org/:_authToken={v.hex_secret()}\n",
        ".pypirc": f"[pypi]\nusername = __token__\npassword = pypi-{v.key_body()}\n",
        ".git-credentials": f"https://alice:{v.github()}@github.com\n",
        ".my.cnf": f"[client]\npassword={v.password()}\n",
        ".s3cfg": f"[default]\naccess_key = {v.aws_id()}\nsecret_key = {v.aws_secret()}\n",
        ".aws/credentials": f"[default]\naws_access_key_id = {v.aws_id()}\naws_secret_access_key = {v.aws_secret()}\n",
        ".aws/config": f"[default]\nregion = eu-west-1\n# {v.aws_secret()}\n",
        ".azure/accessTokens.json": f'[{{"accessToken": "{v.jwt()}"}}]\n',
        ".config/gh/hosts.yml": f"github.com:\n    oauth_token: {v.github()}\n    user: alice\n",
        ".config/gcloud/application_default_credentials.json": f'{{"refresh_token": "{v.google_oauth()}"}}\n',
        ".config/hub": f"github.com:\n- oauth_token: {v.github()}\n",
        ".docker/config.json": f'{{"auths": {{"registry.example.com": {{"auth": "{v.key_body()}"}}}}}}\n',
        ".kube/config": f"users:\n- name: admin\n  user:\n    token: {v.jwt()}\n",
        ".ssh/id_ed25519": key_block.format(v.key_body(), v.key_body()),
        ".ssh/config": f"Host prod\n  IdentityFile ~/.ssh/id_ed25519\n  # {v.password()}\n",
        ".gnupg/private-keys-v1.d/0A1B2C.key": f"(protected-private-key (rsa (n #{v.hex_secret()}#)))\n",
        ".m2/settings.xml": f"<settings><servers><server><password>{v.password()}</password></server></servers></settings>\n",
        ".cargo/credentials.toml": f'[registry]\ntoken = "{v.hex_secret()}"\n',
        ".terraform.d/credentials.tfrc.json": f'{{"credentials": {{"app.terraform.io": {{"token": "{v.key_body()}"}}}}}}\n',
        ".local/share/keyrings/login.keyring": f"{v.password()}\n",
        ".password-store/email.gpg": f"{v.password()}\n",
        "Library/Keychains/login.keychain-db": f"{v.password()}\n",
        "project/.envrc": f"export AWS_ACCESS_KEY_ID={v.aws_id()}\nexport AWS_SECRET_ACCESS_KEY={v.aws_secret()}\n",
        "project/.env": f"DATABASE_URL=postgres://app:{v.password()}@localhost/app\n",
        "project/.env.local": f"STRIPE_SECRET_KEY={v.stripe()}\n",
        "project/.env.production": f"OPENAI_API_KEY={v.openai()}\n",
        "project/.bash_history": f"curl -H 'Authorization: Bearer {v.github()}' https://api.github.com\n",
        "project/terraform.tfstate": f'{{"resources": [{{"attributes": {{"password": "{v.password()}"}}}}]}}\n',
        "project/terraform.tfstate.backup": f'{{"outputs": {{"db_password": {{"value": "{v.password()}"}}}}}}\n',
        "project/prod.tfvars": f'db_password = "{v.password()}"\n',
        "project/.terraform/terraform.tfstate": f'{{"backend": {{"token": "{v.hex_secret()}"}}}}\n',
        "project/id_ed25519": key_block.format(v.key_body(), v.key_body()),
        "project/id_rsa.pub": f"ssh-rsa {v.key_body()} alice@laptop\n",
        "project/server.pem": "-----BEGIN RSA PRIVATE KEY-----\n" + v.key_body() + "\n-----END RSA PRIVATE KEY-----\n",
        "project/tls.key": v.key_body() + "\n",
        "project/keystore.p12": v.key_body() + "\n",
        "project/vault.kdbx": v.key_body() + "\n",
        "project/credentials.json": f'{{"client_secret": "{v.password()}"}}\n',
        "project/config/credentials.yml": f"aws:\n  secret: {v.aws_secret()}\n",
        "project/secrets.yaml": f"api: {v.anthropic()}\n",
        "project/config/secrets.json": f'{{"slack": "{v.slack()}"}}\n',
        "project/config/master.key": v.hex_secret() + "\n",
        "project/.htpasswd": f"admin:$apr1${v.key_body()[:8]}${v.key_body()[:22]}\n",
        "project/app.sqlite": f"SQLite format 3 {v.password()}\n",
        "project/data.db": f"{v.password()}\n",
        "project/cookies.txt": f".example.com\tTRUE\t/\tTRUE\t0\tsession\t{v.hex_secret()}\n",
        "project/service-account-token.json": f'{{"private_key_id": "{v.hex_secret()}"}}\n',
        "project/client_secret_42.apps.googleusercontent.com.json": f'{{"web": {{"client_secret": "{v.password()}"}}}}\n',
        "project/db_password.txt": v.password() + "\n",
        "project/wp-config.php": f"<?php define('DB_PASSWORD', '{v.password()}');\n",
        "project/.git/config": f'[remote "origin"]\n  url = https://oauth2:{v.gitlab()}@gitlab.com/a/b.git\n',
        "project/.vscode/launch.json": f'{{"env": {{"HF_TOKEN": "{v.huggingface()}"}}}}\n',
        "project/.claude/settings.local.json": f'{{"env": {{"ANTHROPIC_API_KEY": "{v.anthropic()}"}}}}\n',
        "project/.aws/credentials": f"[ci]\naws_secret_access_key = {v.aws_secret()}\n",
        "project/kubeconfig": f"users:\n- user:\n    token: {v.jwt()}\n",
        "project/.npmrc": f"//npm.pkg.github.com/:_authToken={v.github()}\n",
    }


def _ordinary_files(v: _Values) -> dict[str, str]:
    """Project files the evidence search reads, each carrying planted secret values."""
    key = "\n".join(v.key_body() for _ in range(3))
    return {
        "project/src/settings.py": (
            f'SECRET_KEY = "{v.hex_secret()}"\nDEBUG = False\nAWS_SECRET_ACCESS_KEY = "{v.aws_secret()}"\n'
            f'DATABASES = {{"default": {{"PASSWORD": "{v.password()}", "HOST": "db"}}}}\n'
            "def login(password: str, token: str | None = None):\n    return check(password=password)\n"
        ),
        "project/src/client.js": (
            f'const apiKey = "{v.openai()}";\nconst headers = {{ Authorization: "Bearer {v.jwt()}" }};\n'
            f"const stripe = require('stripe')('{v.stripe()}');\n"
        ),
        "project/src/notify.go": f'const slackToken = "{v.slack()}"\nvar hook = "https://hooks.slack.com/services/T0/B0/{v.hex_secret()[:24]}"\n',
        "project/src/ai.ts": f'export const anthropic = new Anthropic({{ apiKey: "{v.anthropic()}" }});\nconst g = "{v.google()}";\n',
        "project/config/app.yaml": (
            f"database_url: postgres://app:{v.password()}@db.example.com:5432/app\n"
            f"github_token: {v.github_pat()}\nsmtp:\n  password: {v.password()}\n"
        ),
        "project/config/settings.toml": f'[service]\napi_key = "{v.huggingface()}"\nclient_secret = "{v.password()}"\n',
        "project/config/app.ini": f"[db]\nuser = app\npassword = {v.password()}\n",
        "project/docker-compose.yml": f"services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: {v.password()}\n      MYSQL_ROOT_PASS: {v.password()}\n",
        "project/deploy.sh": (
            f"#!/bin/sh\ncurl -u deploy:{v.password()} https://ci.example.com\n"
            f"mysql -h db -u root -p{v.password()} app < dump.sql\nvault login --token={v.vault()}\n"
        ),
        "project/README.md": (
            f"# App\n\nSet `export GITHUB_TOKEN={v.github()}` first.\n\n"
            f"A sample token: {v.jwt()}\n\nGitLab: {v.gitlab()}\n"
        ),
        "project/docs/setup.md": (
            f"Add to ~/.pgpass:\n\n    localhost:5432:app:app:{v.password()}\n\n"
            f"and to ~/.netrc:\n\n    machine example.com login bob password {v.password()}\n"
        ),
        "project/docs/notes.txt": f"pasted by mistake:\n-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----\n",
        "project/src/Connection.cs": f'var cs = "Server=db;User Id=app;Password={v.password()};";\n',
        "project/src/config.json": f'{{"api_key": "{v.google()}", "oauth": "{v.google_oauth()}"}}\n',
        "project/.github/workflows/ci.yml": f"env:\n  NPM_TOKEN: {v.hex_secret()}\n  APP_KEY: base64:{v.key_body()}\n",
        "project/Makefile": f"deploy:\n\tcurl -H 'X-Api-Key: {v.hex_secret()}' https://x\n",
        "project/docs/env-example.md": f"STRIPE_KEY={v.stripe()}\n",
    }


def build_home(home: Path, copies: int = 1, seed: int = 0) -> HostileHome:
    """Write the hostile home (``copies`` projects: ``project``, ``project-2`` …) and say what it holds."""
    rng = random.Random(seed)
    built = HostileHome(home)
    values = _Values(rng)
    personal = {p: c for p, c in _secret_files(values).items() if not p.startswith("project/")}
    files: dict[str, tuple[str, bool]] = {p: (c, True) for p, c in personal.items()}
    for n in range(1, copies + 1):  # later copies nest their files as monorepos do
        prefix = "project" if n == 1 else f"project-{n}/" + rng.choice(["", "services/api/", "apps/web/", "infra/"])
        prefix = prefix.rstrip("/")
        for path, content in _secret_files(values).items():
            if path.startswith("project/"):
                files[prefix + path[len("project") :]] = (content, True)
        for path, content in _ordinary_files(values).items():
            files[prefix + path[len("project") :]] = (content, False)
    for number, (path, (content, secret)) in enumerate(sorted(files.items())):
        canary = f"CANARY{number:05d}{'S' if secret else 'R'}"
        target = home / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{content}# {canary}\n", encoding="utf-8")
        (built.secret_files if secret else built.ordinary_files).append(path)
        (built.canaries if secret else built.readable_canaries)[path] = canary
    built.planted = list(values.made)
    return built


# Secret files whose values have a telling shape or context (a bare random password echoed on its
# own line is no pattern any redaction can know): the transcript shows these as the agent printed them.
PRINTED_IN_TRANSCRIPT = (
    "project/.envrc",
    "project/.env.local",
    "project/terraform.tfstate",
    "project/secrets.yaml",
    "project/server.pem",
    ".bash_history",
    ".pgpass",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".vault-token",
    ".config/gh/hosts.yml",
    ".aws/credentials",
    ".kube/config",
    ".ssh/id_ed25519",
)


def transcript_text(home: HostileHome) -> str:
    """A transcript in which the agent printed secret files and project files (values planted in the log)."""
    lines = ["user: why does deploy fail?", "agent: Let me look at the environment."]
    for path in [*PRINTED_IN_TRANSCRIPT, *home.ordinary_files]:
        lines.append(f"agent: Read {path}")
        text = (home.home / path).read_text(encoding="utf-8")
        lines.extend(line for line in text.splitlines() if "CANARY" not in line)
    lines.append("agent: the token had expired; rotated it")
    return "\n".join(lines)
