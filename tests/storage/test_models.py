"""How values are written into the database's JSON columns."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from krigbot.storage.models import encode_json


@pytest.mark.parametrize(
    "value",
    [
        {"round": 3, "piles": ["2H 3D", ""], "rng": None, "eternal": {"at": None, "ok": True}},
        {"players": (111111111111111111, 222222222222222222)},
        {1: "a key that is a number", None: "and none"},
        {"seed": 2**70, "low": -(2**64)},
        {"x": 1e16, "y": -0.0, "z": 0.1, "w": 1.5e-300},
        {"name": "Åse \U0001f0a1 \u200b", "quote": '"\\/'},
        [[[[{"deep": [1]}]]]],
    ],
)
def test_a_value_reads_back_as_json_itself_would_write_it(value: Any) -> None:
    assert json.loads(encode_json(value)) == json.loads(json.dumps(value))


def test_a_value_is_written_compactly_with_its_text_as_itself() -> None:
    assert encode_json({"a": [1, None], "name": "Åse \U0001f0a1"}) == (
        '{"a":[1,null],"name":"Åse \U0001f0a1"}'
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_refused_wherever_they_are(bad: float) -> None:
    for value in ({"x": bad}, {"a": [1, {"b": bad}]}, [bad], {"t": (bad,)}):
        with pytest.raises(ValueError, match="JSON"):
            encode_json(value)


@dataclass
class _Seat:
    number: int


@pytest.mark.parametrize("value", [{"x": {1, 2}}, {"seat": _Seat(1)}, {"when": object()}])
def test_what_json_cannot_write_is_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        encode_json(value)
