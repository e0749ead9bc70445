"""ccm-tui: a terminal chat app whose context is managed by efforts."""

__version__ = "0.1.0"
