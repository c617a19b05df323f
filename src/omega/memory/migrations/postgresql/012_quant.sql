-- The quant engine's settings (symbol, portfolio, enabled, paper/live, the pending live
-- confirmation), its latest signal and engine state, as key -> JSON value.
CREATE TABLE quant_settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Every order the executor meant to place (written before the broker is called) and what
-- came of it. The client order id is deterministic, so a restart resumes without placing an
-- order twice.
CREATE TABLE quant_orders (
    client_order_id TEXT PRIMARY KEY,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    day             TEXT NOT NULL,
    mode            TEXT NOT NULL CHECK (mode IN ('paper', 'live')),
    symbol          TEXT NOT NULL,
    side            TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    quantity        BIGINT NOT NULL CHECK (quantity > 0),
    signal_time     TEXT NOT NULL,
    signal_price    DOUBLE PRECISION NOT NULL,
    status          TEXT NOT NULL,
    broker_order_id TEXT NOT NULL DEFAULT '',
    fill_price      DOUBLE PRECISION,
    filled_qty      BIGINT NOT NULL DEFAULT 0,
    realized_pnl    DOUBLE PRECISION NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_quant_orders_day ON quant_orders (day, mode);

-- The executor's position per symbol and mode (paper and live never mix).
CREATE TABLE quant_positions (
    symbol    TEXT NOT NULL,
    mode      TEXT NOT NULL,
    quantity  BIGINT NOT NULL,
    avg_price DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (symbol, mode)
);
