"""The root of Omega's own errors: `except OmegaError` catches every error Omega raises on
purpose (bad config, a provider that failed, a refused tool call, ...) and nothing else.

Each error class keeps its other standard base where callers rely on it (ValueError, OSError,
LookupError), so `except ValueError` goes on catching what it caught before.
"""


class OmegaError(Exception):
    """Catch Omega's errors as one kind; every error class Omega defines derives from it."""
