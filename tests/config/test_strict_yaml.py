"""The strict YAML reader: duplicate keys, alias bombs and recursion refused, one line each."""

import string
import time

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.config.strict_yaml import (
    MAX_DEPTH,
    StrictYAMLError,
    check_node,
    load_strict,
    read_strict,
)


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Nested aliases: ``levels`` lines of ``width`` aliases each stand for width**levels values."""
    lines = ["b0: &b0 [" + ", ".join(str(i) for i in range(width)) + "]"]
    for i in range(1, levels):
        lines.append(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_plain_mapping_loads():
    assert load_strict("a: 1\nb: [x, 2.5]\nc: {d: null}\n") == {
        "a": 1,
        "b": ["x", 2.5],
        "c": {"d": None},
    }
    assert load_strict("") is None


def test_duplicate_top_level_key_is_named_with_lines():
    with pytest.raises(StrictYAMLError, match=r"key 'seed' appears twice \(line 1 and line 3\)"):
        load_strict("seed: 0\nrun_name: x\nseed: 1\n")


def test_duplicate_nested_key_is_named_by_path():
    with pytest.raises(StrictYAMLError, match=r"'task\.n' appears twice"):
        load_strict("task:\n  n: 8\n  d: 8\n  n: 16\n")
    with pytest.raises(StrictYAMLError, match=r"'train\.classes\.default\.lr' appears twice"):
        load_strict("train: {classes: {default: {lr: 1, batch: 2, lr: 3}}}\n")


def test_merge_key_may_be_overridden():
    """``<<: *base`` then a key of base: YAML's merge semantics, not a duplicate."""
    text = "base: &b {lr: 1, batch: 2}\nL4:\n  <<: *b\n  lr: 3\n"
    assert load_strict(text)["L4"] == {"lr": 3, "batch": 2}


def test_few_aliases_are_fine():
    assert load_strict("a: &a [1, 2]\nb: *a\nc: [*a, *a]\n")["c"] == [[1, 2], [1, 2]]


def test_alias_bomb_is_refused_fast():
    text = alias_bomb()
    assert len(text.encode()) < 1700  # a 1.6 KB file: 9^9 ≈ 3.9e8 values
    t0 = time.perf_counter()
    with pytest.raises(StrictYAMLError, match=r"key 'b\d' stands for more than 100000 values"):
        load_strict(text)
    assert (
        time.perf_counter() - t0 < 10.0
    )  # refused, not expanded (that takes minutes): a loose bound on a loaded machine


def test_value_count_is_exact_with_aliases_expanded():
    # counted by hand: the root mapping 1; key b0 1 + its list 1 + 3 ints;
    # key b1 1 + its list 1 + 2 × (the aliased list 1 + 3 ints) = 16
    node = yaml.compose("b0: &a [1, 2, 3]\nb1: [*a, *a]\n")
    assert check_node(node) == 1 + (1 + 1 + 3) + (1 + 1 + 2 * (1 + 3)) == 16
    with pytest.raises(StrictYAMLError, match="more than 15 values"):
        check_node(node, max_values=15)
    assert check_node(node, max_values=16) == 16


def test_recursive_alias_is_refused():
    with pytest.raises(StrictYAMLError, match="recursive alias"):
        load_strict("a: &a [1, *a]\n")


def test_deep_nesting_is_refused():
    with pytest.raises(StrictYAMLError, match="levels deep"):
        load_strict("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n")
    with pytest.raises(StrictYAMLError, match="levels deep"):
        load_strict("[" * 5000 + "]" * 5000)  # deeper than the composer's recursion


def test_unsafe_tag_and_bad_yaml_are_one_line():
    for text in ("a: !!python/object/apply:os.system [ls]\n", "a: [1, 2\n", "a: 1\n---\nb: 2\n"):
        with pytest.raises(StrictYAMLError, match="not valid YAML") as exc:
            load_strict(text)
        assert "\n" not in str(exc.value)


def test_read_strict_names_the_file(tmp_path):
    with pytest.raises(StrictYAMLError, match="does not exist"):
        read_strict(tmp_path / "none.yaml")
    p = tmp_path / "dup.yaml"
    p.write_text("a: 1\na: 2\n")
    with pytest.raises(StrictYAMLError, match=rf"config file {p}: key 'a' appears twice"):
        read_strict(p)
    p.write_bytes(b"a: \xff\n")
    with pytest.raises(StrictYAMLError, match="cannot be read"):
        read_strict(p)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    # no subnormals: engine.train_students flushes them to zero process-wide (FTZ), and
    # hypothesis cannot draw them once a test before this one has trained
    | st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False)
    | st.text(max_size=8)
)
_keys = st.text(min_size=1, max_size=6)
_trees = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, _trees, max_size=5))
def test_strict_agrees_with_safe_load_on_plain_documents(tree):
    """Whatever safe_dump writes (no duplicates, no aliases), the strict reader reads back."""
    text = yaml.safe_dump(tree)
    assert load_strict(text) == yaml.safe_load(text) == tree


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=6),
        min_size=1,
        max_size=6,
        unique=True,
    ),
    st.data(),
)
def test_any_repeated_key_is_refused(keys, data):
    """A mapping whose keys repeat one of them, anywhere in the list, is refused."""
    dup = data.draw(st.sampled_from(keys))
    at = data.draw(st.integers(0, len(keys)))
    names = [*keys[:at], dup, *keys[at:]]
    text = "".join(f"'{k}': {i}\n" for i, k in enumerate(names))
    with pytest.raises(StrictYAMLError, match="appears twice"):
        load_strict(text)
