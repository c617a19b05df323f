"""The planner's answer as a model writes it, fuzzed: parse_plan returns a Plan for any text
(JSON or not, any nesting, any types) and never raises; a plan never names more than it
may; and a long run of "{" is read in linear time (the greedy `\\{.*\\}` search it replaced
took seconds on 200,000 of them)."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from omega.gateway.routing import MAX_PLANNED, Plan, parse_plan

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

any_text = st.text(st.characters(codec=None, categories=None), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(any_text, kids, max_size=4),
    max_leaves=12,
)
plans = st.fixed_dictionaries(
    {"kind": st.sampled_from(["direct", "steps", "requires_new_skill", "x"]) | json_values},
    optional={
        "steps": st.lists(
            any_text
            | st.fixed_dictionaries(
                {"do": any_text | json_values}, optional={"uses": any_text | json_values}
            ),
            max_size=5,
        )
        | json_values,
        "missing_capability": any_text | json_values,
        "reason": any_text | json_values,
    },
)
answers = st.one_of(
    plans.map(json.dumps),
    st.tuples(plans.map(json.dumps), any_text, any_text).map(lambda t: f"{t[1]}\n{t[0]}\n{t[2]}"),
    st.tuples(plans.map(json.dumps), st.integers(0, 100)).map(lambda t: t[0][: t[1]]),
    st.lists(any_text, max_size=5).map(lambda xs: "\n".join(f"{i}. {x}" for i, x in enumerate(xs))),
    any_text,
    st.builds(
        lambda u, n: u * n,
        st.sampled_from(["{", "}{", "[", "1. ", '{"kind":']),
        st.integers(1, 20_000),
    ),
)


@settings(max_examples=300, deadline=None)
@given(answers, st.lists(any_text, max_size=3))
@example('{"kind": "steps", "steps": [{"do": "a", "uses": 3}, "b"]}', ["a"])
@example("x { y } z {", [])
def test_any_answer_is_a_plan(text: str, known: list[str]) -> None:
    plan = parse_plan(text, known)
    assert isinstance(plan, Plan)
    assert plan.kind in ("direct", "steps", "requires_new_skill")
    assert len(plan.steps) <= MAX_PLANNED
    assert all(isinstance(step.do, str) and step.do.strip() for step in plan.steps)


def test_the_json_is_found_around_prose_as_before() -> None:
    text = 'Plan: {"kind": "requires_new_skill", "missing_capability": "fax", "reason": "no"} ok'
    assert parse_plan(text, []).missing_capability == "fax"
    assert parse_plan("} {", []) == parse_plan("direct", [])


def test_a_long_run_of_open_braces_is_read_in_linear_time() -> None:
    started = time.perf_counter()
    parse_plan("{" * 200_000, [])
    assert time.perf_counter() - started < 1.0
