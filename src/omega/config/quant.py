"""[quant]: the Interactive Brokers feed and the executor's limits."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from omega.config.base import Section


class QuantSection(Section):
    """`omega start` runs the quant feed when enabled; /quant enable|disable, the symbol, the
    portfolio and paper/live are chat settings kept in memory.db."""

    enabled: bool = False  # run the feed (also switched on in chat: /quant enable)
    host: str = "127.0.0.1"  # where IB Gateway or TWS listens
    port: Annotated[int, Field(ge=1, le=65535)] = 4002  # IB Gateway paper; TWS paper is 7497
    client_id: Annotated[int, Field(ge=0)] = 17  # the read-only market-data connection's id
    # Live orders use a second, non-read-only connection with its own client id, opened only
    # after the owner confirmed live mode.
    order_client_id: Annotated[int, Field(ge=0)] = 18
    exchange: str = "SMART"  # the exchange the symbol's contract names (IB's SMART routing)
    currency: str = "USD"  # the symbol's currency
    max_daily_orders: Annotated[int, Field(ge=0)] = 20  # orders placed in a day, at most
    # No new order once the day's realised + unrealised loss reaches this share of the portfolio.
    daily_loss_limit: Annotated[float, Field(ge=0, le=1)] = 0.02
    limit_slippage: Annotated[float, Field(ge=0, le=0.02)] = 0.001  # limit = signal ± 0.1%
    fill_timeout_secs: Annotated[float, Field(gt=0, le=3600)] = 30.0  # then cancel the rest

    @model_validator(mode="after")
    def _distinct_client_ids(self) -> QuantSection:
        if self.order_client_id == self.client_id:
            raise ValueError("order_client_id must differ from client_id (the feed's)")
        return self
