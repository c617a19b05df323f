-- The web page's chat (issue 14): everything said on the page and everything Omega sent to it
-- (replies, reminders, alerts, images), so a reload shows the conversation as it happened.
CREATE TABLE web_events (
    id          INTEGER PRIMARY KEY,
    created_at  TEXT NOT NULL,
    direction   TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    kind        TEXT NOT NULL,
    text        TEXT NOT NULL DEFAULT '',
    media       TEXT NOT NULL DEFAULT ''      -- file name under $OMEGA_HOME/web-media
);
