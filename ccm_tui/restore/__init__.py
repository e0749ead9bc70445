"""Importing transcripts other agents wrote (``ccm-tui restore``): one parser per format (``formats/``),
detection and sanity checks, the import use case (idempotent, with a call budget said before the first
call), summaries with evidence read from an allow-listed root with secrets redacted, and landing the
efforts in a session through the core's one door."""
