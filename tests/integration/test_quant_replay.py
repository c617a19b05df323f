"""`omega quant replay`: JSON lines per bar, offline, clear errors on a malformed CSV."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from omega.quant.engine import Bar, QuantEngine
from omega.quant.replay import BarsError, read_bars
from tests.conftest import run_omega

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

KEYS = {
    "kalman_price",
    "kalman_trend",
    "ewma_vol",
    "hurst",
    "regime",
    "regime_probs",
    "merton",
    "kelly",
    "direction",
    "confidence",
    "execution",
}


def _write_bars(path: Path, n: int, seed: int = 1) -> list[Bar]:
    rng = np.random.default_rng(seed)
    closes = 50 * np.exp(np.cumsum(rng.normal(1e-4, 1e-3, n)))
    bars = []
    lines = ["time,open,high,low,close,volume"]
    for i, c in enumerate(closes.tolist()):
        o = c * 0.9995
        h, lo = max(o, c) * 1.001, min(o, c) * 0.999
        v = float(100 + i % 7 * 50)
        bars.append(Bar(str(1_700_000_000 + 5 * i), o, h, lo, c, v))
        lines.append(f"{1_700_000_000 + 5 * i},{o!r},{h!r},{lo!r},{c!r},{v:g}")
    path.write_text("\n".join(lines) + "\n")
    return bars


def test_replay_prints_one_json_object_per_bar_equal_to_the_engine(tmp_path: Path) -> None:
    csv_path = tmp_path / "bars.csv"
    bars = _write_bars(csv_path, 700)
    result = run_omega("quant", "replay", str(csv_path), "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 700
    assert all(row.keys() >= KEYS for row in rows)
    engine = QuantEngine()
    assert rows == [engine.process(b).as_dict() for b in bars]
    assert rows[-1]["execution"]["strategy"] in {"Immediate", "TWAP", "NoTrade"}
    assert set(rows[-1]["regime_probs"]) == {"Bull", "Bear", "Lateral"}


def test_replay_human_output(tmp_path: Path) -> None:
    csv_path = tmp_path / "bars.csv"
    _write_bars(csv_path, 30)
    result = run_omega("quant", "replay", str(csv_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 30
    assert "kalman=" in lines[-1] and "H=" in lines[-1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("time,open,high,low,close\n1,1,1,1,1\n", "line 1: the header must name"),
        ("time,open,high,low,close,volume\n1,1,1,1,1,5\n2,1,1,1,abc,5\n", "line 3: close"),
        ("time,open,high,low,close,volume\n1,1,1,1,1,5\n\n2,1,1,1\n", "line 4: expected 6"),
        ("time,open,high,low,close,volume\n1,1,1,1,-1,5\n", "line 2: prices must be positive"),
        ("time,open,high,low,close,volume\n1,1,0.5,0.9,1,5\n", "line 2: high/low"),
        ("time,open,high,low,close,volume\n1,1,1,1,1,-5\n", "line 2: volume is negative"),
        ("time,open,high,low,close,volume\n1,1,1,1,nan,5\n", "line 2: close is not finite"),
        ("", "empty"),
    ],
)
def test_malformed_csv_names_the_line(text: str, message: str) -> None:
    with pytest.raises(BarsError, match=message):
        list(read_bars(io.StringIO(text)))


def test_replay_cli_reports_a_malformed_row_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("time,open,high,low,close,volume\n1,10,10,10,10,1\n2,10,10,10,x,1\n")
    result = run_omega("quant", "replay", str(bad), "--json")
    assert result.returncode == 2
    assert "line 3: close is not a number" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stdout.splitlines()) == 1  # the good bar before it was printed
    missing = run_omega("quant", "replay", str(tmp_path / "nope.csv"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_the_cli_does_not_import_numpy_until_a_quant_command_runs() -> None:
    code = (
        "import sys, omega.cli.main; "
        "print('numpy' in sys.modules, 'omega.quant.engine' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


def _write_turning_bars(path: Path, up: int, down: int, sign: float, seed: int) -> None:
    """`up` bars drifting one way, then `down` bars drifting the other (sign -1: mirrored)."""
    rng = np.random.default_rng(seed)
    returns = np.concatenate([rng.normal(4e-4, 2e-4, up), rng.normal(-4e-4, 2e-4, down)])
    closes = 100 * np.exp(np.cumsum(sign * returns))
    lines = ["time,open,high,low,close,volume"]
    lines += [f"{i},{c!r},{c!r},{c!r},{c!r},1000" for i, c in enumerate(closes.tolist())]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("sign", "first", "then"), [(1.0, "Bull", "Bear"), (-1.0, "Bear", "Bull")])
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_sees_the_regime_change(
    tmp_path: Path, sign: float, first: str, then: str, seed: int
) -> None:
    """800 rising bars (the first Baum-Welch run at bar 501 sees nothing but a rally), then
    600 falling ones: the regime must turn, and soon (it used to stay "Bull, 99%")."""
    csv_path = tmp_path / "turn.csv"
    _write_turning_bars(csv_path, 800, 600, sign, seed)
    result = run_omega("quant", "replay", str(csv_path), "--json")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 1400
    before = [r["regime"] for r in rows[600:800]]
    assert before.count(first) / len(before) > 0.9
    turned = next(i for i in range(800, 1400) if rows[i]["regime"] == then)
    assert turned < 850, f"the regime turned only at bar {turned}"
    after = rows[900:]
    assert sum(r["regime"] == then for r in after) / len(after) > 0.9
    assert after[-1]["regime"] == then and after[-1]["confidence"] > 0.8
    assert after[-1]["direction"] == ("Short" if then == "Bear" else "Long")
