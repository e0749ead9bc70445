"""The Textual app: it draws the session controller's snapshots and events and sends it intents, nothing else.

:mod:`.app` builds the app; :mod:`.controller_link` is the worker that links it to the controller;
``screens/`` and ``widgets/`` are what is drawn; beside them the keys, the command palette, the offers
under the input, pastes and text that is never read as markup, and the watcher that captures other
agents' sessions while the app is open (``watch_worker``, ``watch_in_tui``). Imports the core through
``ccm_tui.core.api`` only.
"""
