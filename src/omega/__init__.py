"""Omega: a personal AI agent that knows what it cannot do yet and evolves safely."""

__version__ = "0.1.0"
