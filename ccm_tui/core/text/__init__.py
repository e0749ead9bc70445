"""Text without a session: words and stop words, token counts, offline extractive summaries and topic
segments, and model or file text made safe for a terminal. The bottom of the core: imports only
``ccm_tui.config``.
"""
