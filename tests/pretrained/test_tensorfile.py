"""The .safetensors reader: values read back exactly, and every damaged file refused in one line
(a truncated copy at any byte, a header that is not JSON, tensors that do not tile the buffer)."""

import json

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from tiny import safetensors_bytes, write_safetensors

from entropic_bound.pretrained.errors import PretrainedError
from entropic_bound.pretrained.tensorfile import TensorFile, read_header


def test_values_dtypes_and_metadata_read_back_exactly(tmp_path):
    path = write_safetensors(
        tmp_path / "m.safetensors",
        {
            "a": torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
            "b": torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
            "c": torch.tensor([7, -3], dtype=torch.int64),
            "empty": torch.zeros(0, 3),
            "scalar": torch.tensor(0.25),
        },
        metadata={"format": "pt"},
    )
    f = TensorFile(path)
    assert f.names() == ["a", "b", "c", "empty", "scalar"]
    assert f.metadata == {"format": "pt"}
    assert f.read("a").tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert f.read("b").dtype == torch.bfloat16 and f.read("b").tolist() == [1.5, -2.0]
    assert f.read("c").tolist() == [7, -3]
    assert f.read("empty").shape == (0, 3)
    assert f.read("scalar").shape == () and f.read("scalar").item() == 0.25
    # as a model reads it: float32, shape checked
    w = f.weight("b", (2,), "config.json")
    assert w.dtype == torch.float32 and w.tolist() == [1.5, -2.0]


def test_a_weight_of_another_shape_or_kind_or_absent_is_one_line(tmp_path):
    f = TensorFile(
        write_safetensors(
            tmp_path / "m.safetensors",
            {"w": torch.zeros(2, 3), "i": torch.zeros(2, dtype=torch.int64)},
        )
    )
    with pytest.raises(
        PretrainedError, match=r"'w' has shape \[2, 3\] but config.json gives \[3, 2\]"
    ):
        f.weight("w", (3, 2), "config.json")
    with pytest.raises(PretrainedError, match="'i' is I64, not floating point"):
        f.weight("i", (2,), "config.json")
    with pytest.raises(PretrainedError, match="has no tensor 'v'"):
        f.weight("v", (2,), "config.json")


tensors = st.dictionaries(
    st.text("abc.", min_size=1, max_size=4),
    st.tuples(
        st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.uint8]),
        st.lists(st.integers(0, 3), max_size=3),
        st.integers(0, 2**16),
    ),
    min_size=1,
    max_size=4,
)


def _build(spec) -> dict[str, torch.Tensor]:
    out = {}
    for name, (dtype, shape, seed) in spec.items():
        g = torch.Generator().manual_seed(seed)
        out[name] = (100 * torch.randn(tuple(shape), generator=g)).to(dtype)
    return out


@given(tensors)
def test_any_file_reads_back_bit_for_bit(tmp_path_factory, spec):
    ts = _build(spec)
    path = write_safetensors(tmp_path_factory.mktemp("f") / "m.safetensors", ts)
    f = TensorFile(path)
    assert f.names() == sorted(ts)
    for name, t in ts.items():
        got = f.read(name)
        assert got.dtype == t.dtype and got.shape == t.shape and torch.equal(got, t)


@given(tensors, st.data())
def test_every_truncation_and_every_appended_byte_is_refused(tmp_path_factory, spec, data):
    raw = safetensors_bytes(_build(spec))
    cut = data.draw(st.integers(0, len(raw) - 1))
    path = tmp_path_factory.mktemp("f") / "m.safetensors"
    for damaged in (raw[:cut], raw + b"\0"):
        path.write_bytes(damaged)
        with pytest.raises(PretrainedError) as err:
            TensorFile(path)
        assert "\n" not in str(err.value) and "download or unpack it again" in str(err.value)


def _with_header(path, header: dict, buffer: bytes):
    text = json.dumps(header).encode()
    path.write_bytes(len(text).to_bytes(8, "little") + text + buffer)
    return path


@pytest.mark.parametrize(
    "header, buffer, why",
    [
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(4), "describes"),
        (
            {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}},
            bytes(4),
            "4 bytes for shape",
        ),
        ({"a": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}}, bytes(4), "unknown dtype"),
        ({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, bytes(4), "malformed"),
        ({"a": {"dtype": "F32", "shape": [1]}}, bytes(4), "lacks dtype, shape or data_offsets"),
        (
            {
                "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]},
            },
            bytes(12),
            "gap or overlap at buffer byte 4",
        ),
        (
            {
                "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            },
            bytes(4),
            "gap or overlap",
        ),
        ([1, 2], b"", "not a JSON object"),
    ],
)
def test_a_header_that_does_not_describe_the_buffer_is_refused(tmp_path, header, buffer, why):
    path = _with_header(tmp_path / "m.safetensors", header, buffer)
    with pytest.raises(PretrainedError, match=why):
        read_header(path)


def test_a_header_that_is_not_json_or_too_long_is_refused(tmp_path):
    path = tmp_path / "m.safetensors"
    path.write_bytes((4).to_bytes(8, "little") + b"{{{{")
    with pytest.raises(PretrainedError, match="the header is not JSON"):
        TensorFile(path)
    path.write_bytes((2**40).to_bytes(8, "little") + b"{}")
    with pytest.raises(
        PretrainedError, match=r"the header claims 1099511627776 bytes, the file holds 2"
    ):
        TensorFile(path)
    path.write_bytes(b"\x01\x02")
    with pytest.raises(PretrainedError, match="2 bytes, shorter than the 8-byte header length"):
        TensorFile(path)


def test_the_reader_agrees_with_the_safetensors_package(tmp_path):
    st_torch = pytest.importorskip("safetensors.torch")
    g = torch.Generator().manual_seed(3)
    ts = {
        "x.weight": torch.randn(5, 7, generator=g),
        "y": torch.randn(3, generator=g).to(torch.bfloat16),
        "z": torch.arange(6, dtype=torch.int32).view(2, 3),
    }
    st_torch.save_file(ts, str(tmp_path / "theirs.safetensors"), metadata={"format": "pt"})
    ours = TensorFile(tmp_path / "theirs.safetensors")
    assert ours.metadata == {"format": "pt"}
    for name, t in ts.items():
        assert torch.equal(ours.read(name), t)
    back = st_torch.load_file(str(write_safetensors(tmp_path / "ours.safetensors", ts)))
    assert all(torch.equal(back[k], t) for k, t in ts.items())
