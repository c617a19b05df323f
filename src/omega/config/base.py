"""The base of every configuration section, and the phone-number form WhatsApp ids use."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A configuration table: unknown keys are errors, aliases ("claude-code") are accepted."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def phone_digits(value: str) -> str:
    """A phone number in international form as WhatsApp ids name it: digits only
    (`+351 900-000-000` -> `351900000000`); "*" stays "*"."""
    value = str(value).strip()
    if value == "*":
        return value
    return "".join(ch for ch in value if ch.isdigit()) or value
