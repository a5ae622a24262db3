"""The graph's input: ``message`` with its alias ``question``, and Studio's plain tunables."""

from __future__ import annotations

import pytest

from sift.errors import InvalidQuery
from sift.graph.intake import BadInput, read_question
from sift.graph.studio import StudioContext, _tunables


@pytest.mark.parametrize(("state", "expected"), [
    ({"message": "  where is x?  "}, "where is x?"),
    ({"question": "where is y?"}, "where is y?"),
    ({"message": "from message", "question": "from question"}, "from message"),
    ({"message": None, "question": "after a cleared message"}, "after a cleared message"),
])
def test_read_question_prefers_message_then_alias(state, expected) -> None:
    assert read_question(state) == expected


@pytest.mark.parametrize("state", [{}, {"message": "   "}, {"question": ""}, {"message": 42}, {"message": "x" * 2001}])
def test_read_question_rejects_missing_or_oversized_input_naming_the_field(state) -> None:
    with pytest.raises(BadInput) as err:
        read_question(state)
    assert err.value.field == "message" and "`message`" in err.value.message
    # one error, two readers: sift's own mapping (400) and LangGraph's server (which shows ValueError messages)
    assert isinstance(err.value, InvalidQuery) and isinstance(err.value, ValueError)


@pytest.mark.parametrize(("given", "expected"), [
    (None, StudioContext()),
    ({}, StudioContext()),
    ({"max_rounds": 2, "use_llm": False, "unknown": 1}, StudioContext(max_rounds=2, use_llm=False)),
    (StudioContext(channel_timeout_ms=99), StudioContext(channel_timeout_ms=99)),
])
def test_studio_tunables_from_whatever_the_run_sent(given, expected) -> None:
    assert _tunables(given) == expected
