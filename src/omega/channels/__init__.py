"""Messaging channels behind one protocol."""
