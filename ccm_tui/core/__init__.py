"""The UI-free core: sessions, efforts, turns, search and models, in eleven packages.

``ui/``, ``commands/`` and ``memory_server/`` import the core only through :mod:`.api`, the one public
module, and drive a session through the session controller it exports. Inside, each package imports only
the packages below it (from the top: service, engine, views, turn, efforts, search and models, session,
manifest, storage and text; import-linter's layers contract in ``pyproject.toml``), modules named ``_x``
are private to their package, and nothing here imports textual.
"""
