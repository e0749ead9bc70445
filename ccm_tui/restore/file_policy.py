"""Which files the evidence search may send to the model: an allow-list, and named refusals.

A project directory holds more than source: ``.envrc`` exports keys, shell histories hold
passwords typed on command lines, ``terraform.tfstate`` holds every secret of the
infrastructure, and ``--root ~`` reaches ``.config/gh/hosts.yml``, ``.pgpass``,
``.vault-token``. A deny-list of such files is never complete, so the rule is the other way
round: a file is read only when its kind is on the allow-list (source code, markup, docs,
configuration formats that are not credential stores, known project files such as
``Makefile``) and nothing about its path says "secret" — a tool or credential directory
anywhere in its real path (``.config``, ``.aws``, ``.kube`` …), a hidden directory other than
CI ones (``.github`` …) under the root, a hidden file other than known project dotfiles
(``.gitignore`` …), a history, a state file, a key, a name with "secret", "token",
"password" or "credential" in a data file. :func:`refusal` says why a file is refused, in
words, for the tool result. A name says nothing once a file is renamed (``kubeconfig.yaml``,
``key.txt``, ``bash_history.txt``), so a file is judged by its content as well
(:func:`content_refusal`: a private key, a kubeconfig, a Terraform state, a ``.netrc``, a WireGuard
or OpenVPN key, a shell history). What the allowed files still carry (a key pasted into a source
file) is redacted from every tool result by :mod:`.redaction`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import PurePosixPath

# Source code: read, whatever the name (a few names of code files that are credential stores
# are refused below).
CODE_EXTENSIONS = frozenset(
    """py pyi pyx pxd ipynb js jsx mjs cjs ts tsx mts cts go rs java kt kts scala sc groovy gradle c h cc cpp
    cxx hpp hh hxx ino cs fs fsx vb swift m mm rb rake php pl pm t lua r jl dart ex exs erl hrl hs lhs ml mli
    clj cljs cljc edn elm vue svelte astro sql graphql gql proto thrift sh bash zsh fish ps1 psm1 bat cmd nim
    zig v sol cairo move tf hcl nix dhall cue rego bzl star cmake mk asm s wat vhd vhdl sv svh""".split()
)
# Markup, docs and configuration formats that are not credential stores by themselves.
TEXT_EXTENSIONS = frozenset(
    """md markdown mdx rst txt text adoc asciidoc org tex bib man 1 html htm xhtml css scss sass less styl
    xml xsd xsl xslt svg json jsonc json5 jsonl ndjson yaml yml toml ini cfg conf properties csv tsv
    lock sum mod diff patch tmpl tpl j2 jinja jinja2 mustache hbs ejs erb haml pug liquid dockerfile
    containerfile gitignore editorconfig""".split()
)
# Files without a telling extension that every project has.
KNOWN_NAMES = frozenset(
    """makefile gnumakefile dockerfile containerfile jenkinsfile vagrantfile procfile gemfile rakefile
    podfile brewfile justfile taskfile snakefile cmakelists.txt license licence copying notice authors
    contributors changelog changes history readme todo install manifest.in pipfile go.mod go.sum
    build buck workspace owners codeowners""".split()
)
# Hidden files that are project settings, not a person's: read like any text file.
SAFE_DOTFILES = frozenset(
    """.gitignore .gitattributes .gitmodules .dockerignore .editorconfig .prettierrc .prettierignore .eslintrc
    .eslintignore .stylelintrc .babelrc .browserslistrc .nvmrc .node-version .python-version .ruby-version
    .tool-versions .flake8 .pylintrc .isort.cfg .coveragerc .pre-commit-config.yaml .pre-commit-hooks.yaml
    .clang-format .clang-tidy .markdownlint.json .markdownlint.yaml .yamllint .yamllint.yaml
    .golangci.yml .golangci.yaml .rustfmt.toml .gitlab-ci.yml .travis.yml .readthedocs.yml .readthedocs.yaml
    .mailmap .swiftlint.yml .rubocop.yml .rspec .hadolint.yaml .shellcheckrc .ignore .rgignore
    .eslintrc.js .eslintrc.cjs .eslintrc.json .eslintrc.yml .eslintrc.yaml .prettierrc.json .prettierrc.yaml
    .prettierrc.yml .prettierrc.js .prettierrc.cjs .babelrc.json .stylelintrc.json""".split()
)
# Hidden directories under the root that hold project files (CI, dev containers, hooks).
SAFE_DOT_DIRS = frozenset(
    ".github .gitlab .circleci .devcontainer .husky .storybook .changeset .buildkite .gitea .forgejo".split()
)
# Directories of tools and credentials: refused wherever they are in a file's real path, even as
# or above the root (``--root ~/.config/gh`` still reads no token).
CREDENTIAL_DIRS = frozenset(
    """.config .local .aws .azure .gcloud .kube .minikube .docker .gnupg .ssh .terraform .terraform.d .git
    .password-store .pki .m2 .gradle .cargo .npm .gem .nuget .oci .chef .ansible .helm .mozilla .thunderbird
    .secrets .credentials .cache .vscode .idea .cursor .claude .codex .gemini .aider .netlify .vercel .fly
    .heroku .supabase .firebase .expo .android .keychain keychains .subversion .hg .bzr .sops""".split()
)
CREDENTIAL_DIR_PATTERNS = (".vault*", ".gnupg*", ".ssh*", ".aws*", ".env*")

# Names refused whatever their extension (case-insensitive shell patterns on the file name).
_HISTORY = (
    "*_history",
    "*_history.*",
    ".*history*",
    "*.history",
    ".lesshst",
    ".viminfo",
    ".wget-hsts",
    "*.hist",
)
_STATE = (
    "*.tfstate",
    "*.tfstate.*",
    "tfstate*",
    "*.tfvars",
    "*.tfvars.json",
    "*.tfplan",
    ".terraformrc",
    "terraform.rc",
)
_ENV = (".env", ".env.*", "*.env", ".envrc", ".flaskenv", "env.local", "*.env.*")
_KEYS = (
    "id_*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "key.*",
    "*_key.*",
    "*-key.*",
    "*.key.*",
    "*.kdbx",
    "*.kdb",
    "*.gpg",
    "*.pgp",
    "*.asc",
    "*.ppk",
    "*.ovpn",
    "*.keychain*",
    "*.mobileprovision",
    "known_hosts*",
    "authorized_keys*",
)
_STORES = (
    ".pgpass",
    "pgpass.conf",
    ".my.cnf",
    "my.cnf",
    ".netrc",
    "_netrc",
    "netrc*",
    "pgpass*",
    "kubeconfig*",
    ".npmrc",
    ".yarnrc*",
    ".pypirc",
    "pip.conf",
    "pip.ini",
    ".git-credentials",
    ".gitconfig",
    ".dockercfg",
    ".s3cfg",
    ".boto",
    "rclone.conf",
    ".htpasswd",
    "htpasswd",
    "*.htpasswd",
    "kubeconfig",
    "*.kubeconfig",
    ".vault-token",
    "vault-token",
    "wp-config.php",
    "*cookie*",
    "*.sqlite*",
    "*.db",
    "*.db-*",
    "*.sqlite3*",
    "shadow",
    "passwd",
    "master.key",
    "credentials",
    "credentials.*",
    "secrets.*",
    "secret.*",
    "*.secret",
    "*.secrets",
    "*.token",
)
# Words that make a data file (not code) a likely credential store: token.json, db-password.txt …
_DATA_WORDS = ("secret", "token", "password", "passwd", "credential", "apikey", "api_key", "api-key", "private")
# Dockerfile.dev, LICENSE-MIT, README_ja: a known name with a suffix.
_KNOWN_PREFIX = re.compile(
    r"^(?:dockerfile|containerfile|makefile|jenkinsfile|license|licence|readme|changelog|copying|notice)[.\-_]"
)
_DATA_WORD_EXCEPTIONS = ("package-lock.json", "tokens.css", "tokens.json")  # design tokens are not secrets

REFUSAL_KINDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (_HISTORY, "a shell or REPL history"),
    (_STATE, "an infrastructure state or variables file"),
    (_ENV, "an environment file"),
    (_KEYS, "a key, certificate store or key file"),
    (_STORES, "a credential store or a database"),
)


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _extension(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return ext if dot and stem.strip(".") else ""


def is_credential_dir(part: str) -> bool:
    """Whether a directory name is one of tools' settings or credentials (``.aws``, ``.vault-x``)."""
    lowered = part.lower()
    return lowered in CREDENTIAL_DIRS or _matches(lowered, CREDENTIAL_DIR_PATTERNS)


def _named_refusal(name: str) -> str | None:
    """Why a file name alone is refused (a history, a key, a credential store …), or None."""
    for patterns, kind in REFUSAL_KINDS:
        if _matches(name, patterns):
            return kind
    ext = _extension(name)
    words = name.replace("tokenizer", "")
    if ext not in CODE_EXTENSIONS and name not in _DATA_WORD_EXCEPTIONS and any(w in words for w in _DATA_WORDS):
        return "named like a secret, token, password or credential file"
    return None


def _kind_refusal(name: str) -> str | None:
    """Why a file's kind is not on the allow-list, or None when it is."""
    if name.startswith("."):
        return None if name in SAFE_DOTFILES else "a hidden file (personal or tool settings)"
    ext = _extension(name)
    if ext in CODE_EXTENSIONS or ext in TEXT_EXTENSIONS or name in KNOWN_NAMES or _KNOWN_PREFIX.match(name):
        return None
    shown = f".{ext} files" if ext else "files without an extension"
    return f"not a source or text file the evidence search reads ({shown})"


def refusal(relative: str, real: str, home: str | None = None) -> str | None:
    """Why the file at ``real`` (``relative`` to the readable root) may not be sent to the model,
    in words; None when it may. ``home``: the user's home directory (only the part of a real
    path below it is checked for tool directories, so a home under ``/srv/.x`` is no reason)."""
    parts = PurePosixPath(relative.replace(os.sep, "/")).parts
    name = parts[-1].lower() if parts else ""
    for part in _real_parts(real, home)[:-1]:
        if is_credential_dir(part):
            return f"it is inside {part}, a directory of tool settings and credentials"
    for part in parts[:-1]:
        if part.startswith(".") and part.lower() not in SAFE_DOT_DIRS:
            return f"it is inside the hidden directory {part}, which may hold secrets"
    named = _named_refusal(name)
    if named:
        return f"it is {named}, which may hold secrets"
    kind = _kind_refusal(name)
    return f"it is {kind}" if kind else None


def _real_parts(real: str, home: str | None) -> tuple[str, ...]:
    real = real.replace(os.sep, "/")
    if home:
        home = home.replace(os.sep, "/").rstrip("/")
        if real.startswith(home + "/"):
            return PurePosixPath(real[len(home) + 1 :]).parts
    return PurePosixPath(real).parts[1:]


# What a credential file holds, whatever its name: (pattern, what the file is).
_CONTENT = tuple(
    (re.compile(pattern, re.M), kind)
    for pattern, kind in (  # (a file that is one: \A; a key pasted into notes is redaction's)
        (r"\A\s*(?:-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d)", "a private key"),
        (r"\A(?:\s*#[^\n]*)*\s*-----BEGIN OpenVPN Static key|^<(?:tls-auth|tls-crypt|key)>", "an OpenVPN key"),
        (r"^\[Interface\][^\[]*^[ \t]*PrivateKey[ \t]*=", "a WireGuard configuration with its private key"),
        (r"^kind:[ \t]*Config[ \t]*$[\s\S]*^users:", "a kubeconfig"),
        (r'"terraform_version"[ \t]*:', "a Terraform state"),
        (r"\A\s*(?:machine[ \t]+\S+|default\b)[\s\S]{0,200}?\bpassword[ \t]+\S", "a .netrc"),
        (r"\A(?:\s*#[^\n]*)*\s*[\w.\-*]+:(?:\d+|\*):[^\s:]+:[^\s:]+:\S+$", "a .pgpass"),
        (r"^\[default\][^\[]*aws_secret_access_key|\A\s*\{\s*\"auths\"[ \t]*:[ \t]*\{", "a credentials file"),
        (r"^: \d{9,10}:\d+;", "a shell history"),
    )
)
_SHELL_LINE = re.compile(r"^(?:sudo |export |cd |ls|git |ssh |scp |curl |mysql |psql |docker |kubectl |vim? |cat )")
CONTENT_HEAD = 64 << 10  # the bytes of a file its content is judged by


def content_refusal(text: str, name: str = "") -> str | None:
    """Why a file whose name passed is refused by what it holds (a credential store renamed), or None.
    ``name``: the file's name (a script of shell commands is code, not a history)."""
    head = text[:CONTENT_HEAD]
    for pattern, kind in _CONTENT:
        if pattern.search(head):
            return f"it holds {kind}, which may hold secrets"
    if _extension(name.lower()) in CODE_EXTENSIONS or name.lower() in KNOWN_NAMES or _KNOWN_PREFIX.match(name.lower()):
        return None
    lines = [line for line in head.splitlines()[:200] if line.strip()]
    if len(lines) >= 4 and sum(1 for line in lines if _SHELL_LINE.match(line)) * 2 > len(lines):
        return "it reads as a shell history, which may hold secrets"
    return None
