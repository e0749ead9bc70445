"""Keys typed before the TUI holds the terminal: read from the terminal's queue and handed to the input,
and from then on an Enter stays an Enter (in line mode the tty turns it into a line feed, which the
app would read as Ctrl+J, a new line) — issue 25, item 2's campaign finding."""

from __future__ import annotations

import os
import select
import sys
import termios

import pytest

from ccm_tui.commands.tui import typed_ahead


def above(fd: int, floor: int) -> int:
    """``fd`` moved to a descriptor number of at least ``floor``."""
    import fcntl

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, floor)
    os.close(fd)
    return moved


@pytest.fixture(params=["low", "high"])
def terminal(monkeypatch, request):
    """A pseudo-terminal as stdin; "high": its descriptor above 1,024, as in a process that holds many
    (select() refuses those; the CI's test worker met it)."""
    master, slave = os.openpty()
    if request.param == "high":
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and hard <= 1100:
            pytest.skip("this machine allows no descriptor above 1,100")
        if soft != resource.RLIM_INFINITY and soft <= 1100:
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (min(hard, 4096) if hard != resource.RLIM_INFINITY else 4096, hard)
            )
            request.addfinalizer(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)))
        slave = above(slave, 1100)
    stdin = os.fdopen(slave, "r", closefd=True)
    monkeypatch.setattr(sys, "stdin", stdin)
    yield master, slave
    stdin.close()
    os.close(master)


def test_what_was_typed_is_read_and_an_enter_typed_meanwhile_stays_an_enter(terminal):
    master, slave = terminal
    before = termios.tcgetattr(slave)
    os.write(master, b"see the new plan\rand th")  # typed in line mode: the Enter became a line feed
    poller = select.poll()  # (not select(): a test process may hold over 1,024 descriptors)
    poller.register(slave, select.POLLIN)
    assert poller.poll(10_000)  # once the tty has taken the line in (it does so apart)
    with typed_ahead() as typed:
        assert typed == "see the new plan\nand th"
        os.write(master, b"en\r")  # typed while the app starts: the Enter is still an Enter
        assert os.read(slave, 100) == b"en\r"
    assert termios.tcgetattr(slave) == before  # the terminal as it was


def test_not_a_terminal_gives_nothing(monkeypatch, tmp_path):
    with open(tmp_path / "f", "w+") as file:
        monkeypatch.setattr(sys, "stdin", file)
        with typed_ahead() as typed:
            assert typed == ""
