"""Importing transcripts other agents wrote (``ccm-tui restore``): one parser per format (``formats/``),
detection and sanity checks, the import use case (idempotent, with a call budget said before the first
call), summaries with evidence read from an allow-listed root with secrets redacted, and landing the
efforts in a session through the core's one door. Capture without a model (``capture``, ``ccm-tui
watch``): each agent session as a concluded effort of the agent's capture session, grown turn by turn
as its file grows; ``stores`` says where the agents keep their sessions and what a file's agent,
project, id and resume command are; ``capture_summaries`` replaces a capture's extractive summary
with a model's, newest first, within the calls per hour and per day of the settings; ``watching`` is
the watch loop (the folders, the backfill, following with watchfiles) for the command and the TUI."""
