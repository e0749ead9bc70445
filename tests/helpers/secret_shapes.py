"""Secret values in the shapes round five of the attacks found readable (issue 42, item 2), for the
redaction tests and ``benchmarks/secrets_campaign.py``: typed declarations, call arguments, values on
the next line, multi-line ``.netrc``, directives without ``=``, Kubernetes key data, values with ``(``,
``.`` or spaces, lower-case key names, Mailgun/Telegram/PuTTY/OpenVPN formats — each as a file holds it,
and each again inside a JSONL transcript record (quotes ``\\"``, line breaks ``\\n``).

Also the credential files renamed so that their names say nothing (``kubeconfig.yaml``, ``key.txt`` …):
the file policy must know them by their content."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Shape:
    label: str
    ext: str  # the extension of the file that holds it (one the evidence search reads)
    text: str  # the shape with its value in place
    value: str  # what must never reach the model


def _value(rng: random.Random, n: int) -> str:
    return f"Qz{n:02d}" + "".join(rng.choice("abcdefghjkmnpqrstuvwxyzACDEFGHJKLMNPQRTUVWXY3479") for _ in range(14))


def _b64(rng: random.Random, n: int) -> str:
    return base64.b64encode(f"-----BEGIN KEY {n} {_value(rng, n)}".encode()).decode()


# (label, extension, template): {v} a random value, {b} base64 key data, {x} 32 hex digits, {t} a bot token
TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("dotenv double quotes", "md", 'API_KEY="{v}"'),
    ("export double quotes", "sh", 'export DB_PASSWORD="{v}"'),
    ("single quotes", "md", "SECRET_KEY='{v}'"),
    ("yaml plain", "yaml", "password: {v}"),
    ("json", "json", '{{"password": "{v}"}}'),
    ("ts typed const", "ts", 'const dbPassword: string = "{v}";'),
    ("ts class field", "ts", "  private readonly apiToken: string = '{v}';"),
    ("go typed var", "go", 'var dbPassword string = "{v}"'),
    ("go const", "go", 'const apiToken = "{v}"'),
    ("go short", "go", '\tdbPassword := "{v}"'),
    ("kotlin typed val", "kt", 'val dbPassword: String = "{v}"'),
    ("rust typed let", "rs", 'let db_password: &str = "{v}";'),
    ("rust static", "rs", 'const API_TOKEN: &\'static str = "{v}";'),
    ("swift typed let", "swift", 'let apiSecret: String = "{v}"'),
    ("java constant", "java", 'private static final String DB_PASSWORD = "{v}";'),
    ("os.environ subscript", "py", 'os.environ["API_TOKEN"] = "{v}"'),
    ("os.environ single", "py", "os.environ['DB_PASSWORD'] = '{v}'"),
    ("php define", "php", "define('DB_PASSWORD', '{v}');"),
    ("go Setenv", "go", 'os.Setenv("API_TOKEN", "{v}")'),
    ("setdefault", "py", 'os.environ.setdefault("SECRET_KEY", "{v}")'),
    ("process.env subscript", "js", 'process.env["STRIPE_SECRET"] = "{v}";'),
    ("config.set", "py", 'config.set("password", "{v}")'),
    ("php $_ENV", "php", "$_ENV['API_KEY'] = '{v}';"),
    ("ruby ENV", "rb", 'ENV["GITHUB_TOKEN"] = "{v}"'),
    ("yaml block literal", "yaml", "db:\n  password: |\n    {v}\n  user: app"),
    ("yaml block folded", "yaml", "private_key: >-\n  {v}\nname: x"),
    ("json next line", "json", '{{\n  "password":\n    "{v}"\n}}'),
    ("netrc multi-line", "txt", "machine api.example.com\n  login alice\n  password {v}"),
    ("netrc one line", "txt", "machine example.org login bob password {v}"),
    ("netrc default", "txt", "default\n  login anonymous\n  password {v}"),
    ("redis requirepass", "conf", "requirepass {v}"),
    ("redis masterauth", "conf", "masterauth {v}"),
    ("wpa psk", "conf", 'network={{\n  ssid="home"\n  psk="{v}"\n}}'),
    ("hostapd passphrase", "conf", "wpa_passphrase={v}"),
    ("sshpass quoted", "sh", "sshpass -p '{v}' ssh deploy@host"),
    ("sshpass glued", "sh", "sshpass -p{v} scp build.tgz host:"),
    ("slapd rootpw", "conf", "rootpw {v}"),
    ("keepalived auth_pass", "conf", "    auth_pass {v}"),
    ("kube client-key-data", "yaml", "users:\n- name: admin\n  user:\n    client-key-data: {b}"),
    ("kube tls.key", "yaml", "data:\n  tls.crt: LS0tQ0VSVA==\n  tls.key: {b}"),
    ("kube dockerconfigjson", "yaml", "data:\n  .dockerconfigjson: {b}"),
    ("kube user token", "yaml", "  user:\n    token: {v}"),
    ("client-secret", "yaml", "client-secret: {v}"),
    ("value with parens", "md", "password=Hunter(2){v}"),
    ("value with dots", "md", "password = my.secret.{v}"),
    ("value with spaces", "yaml", "password: correct horse battery {v}"),
    ("env value with spaces", "md", "DB_PASS=pa ss word {v}"),
    ("quoted with spaces and parens", "py", 'secret = "with spaces (and parens). {v}"'),
    ("lower-case stripe_key", "py", 'stripe_key = "{v}"'),
    ("lower-case mailgun_key", "yaml", "mailgun_key: {v}"),
    ("ini aws secret", "md", "aws_secret_access_key = {v}"),
    ("lower-case sendgrid_key", "py", "sendgrid_key='{v}'"),
    ("db_pass", "py", 'db_pass = "{v}"'),
    ("mailgun format", "md", "MG: key-{x}"),
    ("telegram format", "md", "bot: {t}"),
    (
        "putty key file",
        "txt",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 1\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIE\nPrivate-Lines: 1\n{b}\nPrivate-MAC: {x}",
    ),
    (
        "openvpn static key",
        "txt",
        "-----BEGIN OpenVPN Static key V1-----\n{x}\n{x}\n-----END OpenVPN Static key V1-----",
    ),
    ("bearer header", "md", "Authorization: Bearer {v}"),
    ("url userinfo", "md", "DATABASE_URL=postgres://app:{v}@db:5432/app"),
    ("cli flag", "sh", "deploy --password {v} --yes"),
    ("mysql -p", "sh", "mysql -u root -p{v} app"),
    ("xml element", "xml", "<password>{v}</password>"),
    ("json camel apiKey", "json", '{{"apiKey": "{v}"}}'),
    ("yaml api-key", "yaml", "api-key: {v}"),
    ("xml attribute", "xml", '<db user="app" password="{v}"/>'),
    ("wireguard preshared", "md", "PresharedKey = {b}"),
    ("wireguard private", "md", "PrivateKey = {b}"),
    ("fish set", "fish", "set -gx API_TOKEN {v}"),
    ("powershell env", "ps1", '$env:API_KEY = "{v}"'),
    ("java properties", "properties", "spring.datasource.password={v}"),
    ("heroku config:set", "sh", "heroku config:set SECRET_TOKEN={v}"),
    ("docker -e", "sh", "docker run -e DB_PASSWORD={v} app"),
    ("curl -u", "sh", "curl -u admin:{v} https://api.example.com"),
    ("docker auth", "json", '{{"auths": {{"registry.example.com": {{"auth": "{b}"}}}}}}'),
    (".NET appSettings", "xml", '<add key="ApiKey" value="{v}" />'),
    ("ruby hash rocket", "rb", "api_key => '{v}'"),
    ("escaped json in code", "py", 'body = "{{\\"token\\": \\"{v}\\"}}"'),
)


def shapes(seed: int = 7) -> list[Shape]:
    """Every template with fresh values (one value a shape; each told apart from every other)."""
    rng = random.Random(seed)
    made: list[Shape] = []
    for n, (label, ext, template) in enumerate(TEMPLATES):
        v, b = _value(rng, n), _b64(rng, n)
        x = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        t = f"{rng.randrange(10**8, 10**9)}:AA" + "".join(rng.choice("abcdefABCDEF0123456789_-") for _ in range(33))
        value = {"{v}": v, "{b}": b, "{x}": x, "{t}": t}[next(k for k in ("{v}", "{b}", "{x}", "{t}") if k in template)]
        made.append(Shape(label, ext, template.format(v=v, b=b, x=x, t=t), value))
    return made


def transcript_record(shape: Shape) -> str:
    """The shape as a JSONL transcript shows it: a tool result the agent saw (quotes and line breaks escaped)."""
    record = {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": shape.text}]}}
    return json.dumps(record)


def write_shapes(root: Path, found: list[Shape]) -> list[str]:
    """Each shape in a file of its kind under ``root/shapes``; the paths relative to ``root``."""
    paths = []
    for n, shape in enumerate(found):
        path = Path("shapes") / f"shape_{n:02d}.{shape.ext}"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(shape.text + "\n", encoding="utf-8")
        paths.append(str(path))
    return paths


# Credential files renamed so that their names say nothing: refused by what they hold.
RENAMED: dict[str, str] = {
    "kubeconfig.yaml": "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: {b}\n",
    "bash_history.txt": "ls\ncd app\nexport AWS_PROFILE=prod\nmysql -uroot -p{v}\ngit push\n",
    "tfstate.json": '{{\n  "version": 4,\n  "terraform_version": "1.6.0",\n  "resources": [{{"instances": '
    '[{{"attributes": {{"master_password": "{v}"}}}}]}}]\n}}\n',
    "key.txt": "-----BEGIN OPENSSH PRIVATE KEY-----\n{b}\n-----END OPENSSH PRIVATE KEY-----\n",
    "netrc.txt": "machine github.com\nlogin bot\npassword {v}\n",
    "wg0.conf": "[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = {b}\n\n[Peer]\nPublicKey = abc=\n",
}


def write_renamed(root: Path, seed: int = 7) -> dict[str, str]:
    """The renamed credential files under ``root/renamed``: path (relative to ``root``) → its value."""
    rng = random.Random(seed + 1)
    written = {}
    for n, (name, template) in enumerate(RENAMED.items()):
        v, b = _value(rng, 90 + n), _b64(rng, 90 + n)
        path = Path("renamed") / name
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(template.format(v=v, b=b), encoding="utf-8")
        written[str(path)] = v if "{v}" in template else b
    return written
