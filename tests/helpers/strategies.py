"""hypothesis strategies shared by the robustness tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Any JSON value, nested a little: what a hand-edited or hostile config may contain.
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)
