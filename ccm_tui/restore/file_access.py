"""What the evidence search may read: one root directory, and the rules that keep it there.

A transcript is untrusted input, and so is every path the model names after
reading it. File tools read only regular files under one root directory
(resolved with ``realpath``, so neither ``..`` nor a symlink leads out of it),
never under ``/proc``, ``/sys``, ``/dev`` or ``/run``, only the kinds of file
:mod:`.file_policy` allows (source and text files; never a credential store, a
history, a state file, a key, a tool's settings directory such as ``.config/`` or
``.aws/``), and at most :data:`MAX_FILE_BYTES` of each. Without a root there is no file access at all.
:func:`choose_root` picks the root: ``--root``, else the transcript's project
directory when it is a visible directory inside the user's home.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccm_tui.restore.file_policy import content_refusal, refusal

from ..errors import ToolError

MAX_PATH_CHARS = 1024
MAX_FILE_BYTES = 256 * 1024

# Trees never read, whatever the root: kernel and device views of the machine.
FORBIDDEN_TREES = ("/proc", "/sys", "/dev", "/run")
# System directories that a transcript's recorded cwd may not make the default root.
_SYSTEM_DIRS = (
    "/",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/boot",
    "/var",
    "/opt",
    "/root",
    "/tmp",
    "/home",
    "/Users",
    *FORBIDDEN_TREES,
)
_DRIVE = re.compile(r"^[A-Za-z]:/")


def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives / mix of absolute and relative
        return False


def _in_forbidden_tree(path: str) -> bool:
    return any(_within(path, tree) for tree in FORBIDDEN_TREES)


def choose_root(explicit: Path | None, recorded_cwd: str | None) -> tuple[Path | None, str]:
    """The directory file tools may read, and a one-line reason for the user and the model.

    ``--root`` wins (it must be an existing directory: ValueError otherwise). Else the
    transcript's recorded cwd, if it is an existing directory strictly inside the user's
    home directory and not inside a hidden one (``~/.ssh``, ``~/.aws``, ``~/.config``…):
    a transcript is untrusted and may not choose what the model reads. Else none.
    """
    if explicit is not None:
        real = os.path.realpath(os.path.expanduser(str(explicit)))
        if not os.path.isdir(real):
            raise ValueError(f"--root {explicit} is not a directory")
        return Path(real), f"files under {real} (--root)"
    if not recorded_cwd:
        return None, "no file access: the transcript records no working directory and no --root was given"
    if _DRIVE.match(recorded_cwd.replace("\\", "/")):
        return None, (
            f"no file access: the recorded working directory {recorded_cwd} is a Windows path "
            "(pass --root to point at the project here)"
        )
    if not os.path.isabs(recorded_cwd) or "\x00" in recorded_cwd:
        return None, f"no file access: the recorded working directory {recorded_cwd!r} is not an absolute path"
    real = os.path.realpath(recorded_cwd)
    if not os.path.isdir(real):
        return None, (
            f"no file access: the recorded working directory {recorded_cwd} does not exist here "
            "(pass --root to point at the project)"
        )
    home = os.path.realpath(os.path.expanduser("~"))
    if real == home or not _within(real, home) or real in _SYSTEM_DIRS or _in_forbidden_tree(real):
        return None, (
            f"no file access: the recorded working directory {real} is not a project directory inside "
            f"your home directory {home} (pass --root to allow it)"
        )
    hidden = [part for part in Path(os.path.relpath(real, home)).parts if part.startswith(".")]
    if hidden:
        return None, (
            f"no file access: the recorded working directory {real} is inside the hidden directory "
            f"{hidden[0]} of your home (pass --root to allow it)"
        )
    return Path(real), f"files under {real} (the transcript's working directory)"


@dataclass
class OpenedFile:
    """A regular file read (at most :data:`MAX_FILE_BYTES`) from under the root."""

    relative: str
    text: str
    size: int
    truncated: bool


def _recorded(cwd: str | None) -> str | None:
    """The transcript's cwd with forward slashes; None unless absolute (POSIX or drive letter)."""
    if not cwd or "\x00" in cwd:
        return None
    cwd = cwd.replace("\\", "/")
    if _DRIVE.match(cwd):
        return cwd.rstrip("/") or cwd
    return os.path.normpath(cwd) if os.path.isabs(cwd) else None


class FileAccess:
    """Resolves model-given paths strictly under one root and reads regular files there."""

    def __init__(self, root: Path | None, reason: str = "", recorded_cwd: str | None = None) -> None:
        self.root = os.path.realpath(root) if root is not None else None
        self.reason = reason or ("no file access" if root is None else f"files under {self.root}")
        self.recorded_cwd = _recorded(recorded_cwd)
        self.home = os.path.realpath(os.path.expanduser("~"))

    def resolve(self, path: Any) -> tuple[str, str]:
        """``(real path, path relative to the root)``; ToolError for anything not allowed."""
        if self.root is None:
            raise ToolError(self.reason)
        if not isinstance(path, str) or not path.strip():
            raise ToolError("'path' must be a non-empty string")
        if "\x00" in path or len(path) > MAX_PATH_CHARS:
            raise ToolError("'path' is not a usable file name")
        given = self._from_recorded_cwd(path.strip().replace("\\", "/"))
        candidate = given if os.path.isabs(given) else os.path.join(self.root, given)
        real = os.path.realpath(candidate)
        if not _within(real, self.root):
            if _within(os.path.normpath(candidate), self.root):
                raise ToolError(f"refused: {path} leads outside the readable root (through a symlink)")
            raise ToolError(f"refused: {path} is outside the readable root")
        if _in_forbidden_tree(real):
            raise ToolError(f"refused: {path} is a system or device path")
        relative = os.path.relpath(real, self.root)
        why = refusal(relative, real, self.home)
        if why:
            raise ToolError(f"refused: {path}: {why}")
        return real, relative

    def _from_recorded_cwd(self, given: str) -> str:
        """A path under the transcript's recorded cwd, made relative (the project as recorded → as here).

        Windows paths (``C:\\proj\\app.py`` with cwd ``C:\\proj``) map too, case-insensitively."""
        cwd = self.recorded_cwd
        if not cwd:
            return given
        if _DRIVE.match(cwd) and _DRIVE.match(given):
            prefix = cwd.rstrip("/") + "/"
            return given[len(prefix) :] if given.lower().startswith(prefix.lower()) else given
        if os.path.isabs(given):
            normal = os.path.normpath(given)
            if _within(normal, cwd) and not _within(normal, self.root or "/"):
                return os.path.relpath(normal, cwd)
        return given

    def open(self, path: Any) -> OpenedFile:
        """Read a regular file under the root (capped); ToolError otherwise."""
        real, relative = self.resolve(path)
        try:
            info = os.stat(real)
        except FileNotFoundError:
            raise ToolError(f"no such file: {relative}") from None
        except OSError as exc:
            raise ToolError(f"cannot read {relative}: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"refused: {relative} is not a regular file")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(real, flags)
        except OSError as exc:
            raise ToolError(f"cannot read {relative}: {exc.strerror}") from None
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise ToolError(f"refused: {relative} changed while being opened")
            data = os.read(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
        if b"\x00" in data[:8192]:
            raise ToolError(f"refused: {relative} is a binary file")
        truncated = len(data) > MAX_FILE_BYTES
        text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        why = content_refusal(text, os.path.basename(relative))  # a credential file renamed: its name said nothing
        if why:
            raise ToolError(f"refused: {relative}: {why}")
        return OpenedFile(relative, text, opened.st_size, truncated)

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a readable regular file under the root."""
        try:
            real, _ = self.resolve(path)
            return stat.S_ISREG(os.stat(real).st_mode)
        except (ToolError, OSError):
            return False
