"""Bad prints kept out of the engine: a bar whose close jumps more than the executor's deviation
limit from the last close the engine saw is held back until the next bar says whether the
market really moved.

The executor's 2% guard blocks an order at a bad print's price, but the engine would still
take the print into its Kalman trend, its volatility and its last close, and every later
signal would be computed from them (and the next good bar, compared with the bad close, would
be blocked as well). So the feed asks `PrintScreen.admit` first:
- a bar within the limit of the last close goes through (a bar held before it was a bad
  print: it is dropped);
- a bar within the limit of the bar held goes through after it (two bars at the new level:
  the move was real, and the engine sees it one bar late);
- any other bar is held (one at most: a newer jump replaces an older one, which is dropped).
The first bar of an engine with no history always goes through.
"""

from __future__ import annotations

from dataclasses import dataclass

from omega.quant.engine import Bar


def jumps(close: float, reference: float, limit: float) -> bool:
    """Whether `close` is further than `limit` (a share) from `reference`."""
    return reference > 0 and abs(close - reference) / reference > limit


@dataclass
class PrintScreen:
    """The bar held back, if any; `admit` says which bars the engine takes now."""

    limit: float
    held: Bar | None = None

    def admit(self, bar: Bar, last_close: float) -> tuple[list[Bar], Bar | None]:
        """(the bars to run through the engine now, in order; a held bar now dropped)."""
        held, self.held = self.held, None
        if last_close <= 0 or not jumps(bar.close, last_close, self.limit):
            return [bar], held
        if held is not None and not jumps(bar.close, held.close, self.limit):
            return [held, bar], None
        self.held = bar
        return [], held
