"""The TUI's widgets: the chat log (a few screens around what is seen), a turn as it streams, a message,
the input with its hint and status lines, the sidebar's effort list, token meter and budget bar, banners."""
