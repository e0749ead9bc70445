"""The TUI's screens: the chat (one class), the welcome, the effort inspector, the log and lines viewers,
the model and session pickers, settings, help and the small question and choice dialogs."""
