"""What callers are shown, frozen: effort views and the status, chat lines and scrolling back, search
results and the status as text and JSON, Markdown exports and the export as data (``data_export``:
JSON and JSON lines). Imports :mod:`..turn` and below.
"""
