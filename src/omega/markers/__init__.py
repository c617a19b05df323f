"""Markers: the lines through which the model asks the system to act."""

from omega.markers.registry import MARKERS, MarkerEvent, MarkerSpec, ParseResult, parse_markers

__all__ = ["MARKERS", "MarkerEvent", "MarkerSpec", "ParseResult", "parse_markers"]
