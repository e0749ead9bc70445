"""Chat models: what the core needs from one (:mod:`.interface`), the litellm client, provider
failures in plain words, what is known about a model without importing litellm (window, tools),
checking a typed id, the models the picker offers, and building a session's client and budget.
Imports :mod:`..storage` (redaction, timestamps) and :mod:`..text`.
"""
