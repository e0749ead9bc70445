"""What callers are shown, frozen: effort views and the status, chat lines and scrolling back, search
results and the status as text and JSON, Markdown exports. Imports :mod:`..turn` and below.
"""
