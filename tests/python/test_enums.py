"""The Python package restates the C API's enumerations (spccl/_enums.py,
the dtype tables of spccl/_buffers.py, the error classes): this holds each
to include/spccl.h, parsed here, so that an enumerator added, removed or
renumbered in the header fails here until the package follows. The names
of the values come from the library (``member.library_name``); every value
must have one, and the string parser must accept it."""
from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Dict, Tuple

import pytest

import spccl
from spccl import _buffers, _errors, _spccl
from spccl._enums import enum_value

HEADER = Path(__file__).resolve().parents[2] / "include" / "spccl.h"


def _without_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def parse_enums(text: str) -> Dict[str, Dict[str, int]]:
    """{type name: {enumerator: value}} of every ``typedef enum`` in text,
    without the ``spcclNum*`` counts and the ``*_MaxEnum`` width markers."""
    enums = {}
    for body, type_name in re.findall(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;",
                                      _without_comments(text), flags=re.S):
        values = {}
        for entry in filter(None, (e.strip() for e in body.split(","))):
            name, value = (part.strip() for part in entry.split("="))
            if name.endswith("_MaxEnum") or re.match(r"spccl(\w+)?Num[A-Z]", name):
                continue
            values[name] = int(value, 0)
        enums[type_name] = values
    return enums


def parse_defines(text: str) -> Dict[str, int]:
    return {name: int(value, 0) for name, value in
            re.findall(r"^#define\s+(SPCCL_\w+)\s+(\d+|0x[0-9a-fA-F]+)\b", text, flags=re.M)}


ENUMS = parse_enums(HEADER.read_text())
DEFINES = parse_defines(HEADER.read_text())


def upper_snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).upper()


# Python class, C type, the prefixes the C enumerators carry (longest first).
ENUM_KINDS = [
    (spccl.ReduceOp, "spcclRedOp_t", ("spccl",)),
    (spccl.SparseAlgorithm, "spcclSparseAlgorithm_t", ("spcclSparse",)),
    (spccl.SparseEncoding, "spcclSparseEncoding_t", ("spcclEncoding",)),
    (spccl.SparsePartitioner, "spcclSparsePartitioner_t", ("spcclPartition",)),
    (spccl.Codec, "spcclCodec_t", ("spcclCodec",)),
    (spccl.CompressSchedule, "spcclCompressSchedule_t", ("spcclCompress",)),
    (spccl.PrunePolicy, "spcclPrunePolicy_t", ("spcclPrune",)),
    (spccl.StageMethod, "spcclStageMethod_t", ("spcclStagePartition", "spcclStage")),
    (spccl.BalanceAction, "spcclBalanceAction_t", ("spcclBalance",)),
]
LIBRARY_NAMED = [kind for kind, _, _ in ENUM_KINDS if hasattr(kind, "library_name")]


def python_name(c_name: str, prefixes: Tuple[str, ...]) -> str:
    for prefix in prefixes:
        if c_name.startswith(prefix):
            return upper_snake(c_name[len(prefix):])
    raise AssertionError(f"{c_name} has none of the prefixes {prefixes}")


def test_the_header_parses():
    # A parser that found nothing would pass every comparison below.
    assert ENUMS["spcclSparseAlgorithm_t"]["spcclSparseDense"] == 5
    assert "spcclSparseNumAlgorithms" not in ENUMS["spcclSparseAlgorithm_t"]
    assert ENUMS["spcclDataType_t"]["spcclBfloat16"] == 9


@pytest.mark.parametrize("kind,c_type,prefixes", ENUM_KINDS,
                         ids=[kind.__name__ for kind, _, _ in ENUM_KINDS])
def test_enum_matches_header(kind: type[enum.IntEnum], c_type: str, prefixes: Tuple[str, ...]):
    expected = {python_name(name, prefixes): value for name, value in ENUMS[c_type].items()}
    actual = {member.name: member.value for member in kind}
    assert actual == expected, f"spccl.{kind.__name__} differs from {c_type} in {HEADER}"


def test_every_header_enum_is_checked():
    # The header's other enums: restated nowhere in Python but as below
    # (data types, results, index types) or not at all.
    checked = {c_type for _, c_type, _ in ENUM_KINDS}
    elsewhere = {"spcclDataType_t", "spcclResult_t", "spcclIndexType_t"}
    assert set(ENUMS) == checked | elsewhere


@pytest.mark.parametrize("kind", LIBRARY_NAMED, ids=[k.__name__ for k in LIBRARY_NAMED])
def test_library_names(kind: type[enum.IntEnum]):
    names = [member.library_name for member in kind]
    assert "unknown" not in names, f"the library has no name for a {kind.__name__} value"
    assert len(set(names)) == len(names), names
    # The string parser takes the library's names where they are the
    # members' (Codec, CompressSchedule, ReduceOp: "two-shot", "sum").
    for member in kind:
        if member.library_name.replace("-", "_").upper() == member.name:
            assert enum_value(kind, member.library_name, "x") is member


def test_library_names_of_other_values_are_unknown():
    for function in (_spccl.sparse_algorithm_name, _spccl.sparse_encoding_name,
                     _spccl.sparse_partitioner_name, _spccl.codec_name,
                     _spccl.compress_schedule_name):
        assert function(-1) == "unknown"
        assert function(1000) == "unknown"


def test_names_the_perf_flags_take():
    # docs/perf and the perf binaries' -a/-E/-P/-m/-S flags spell these.
    assert spccl.SparseAlgorithm.BALANCED_PARALLELISM.library_name == "bp"
    assert spccl.SparseAlgorithm.ALL_GATHER.library_name == "agsparse"
    assert spccl.SparsePartitioner.ZEN_HASH.library_name == "zen-hash"
    assert spccl.CompressSchedule.TWO_SHOT.library_name == "two-shot"


def test_dtype_tables_match_header():
    data_types = ENUMS["spcclDataType_t"]
    numpy_types = {dtype.name: value for dtype, value in _buffers._NUMPY_TYPES.items()}
    for table in (numpy_types, _buffers._TORCH_TYPE_NAMES):
        for name, value in table.items():
            assert data_types["spccl" + name.capitalize()] == value, name


def test_index_types_match_header():
    from spccl import _sparse

    for dtype, value in _sparse._INDEX_TYPES.items():
        assert ENUMS["spcclIndexType_t"][f"spcclIndexUint{dtype.itemsize * 8}"] == value, dtype


def test_error_classes_match_header():
    results = ENUMS["spcclResult_t"]
    codes = {}
    for cls in _errors._BY_CODE.values():
        bare = cls.__name__[:-len("Error")]
        c_name = "spccl" + cls.__name__ if "spccl" + cls.__name__ in results else "spccl" + bare
        codes[c_name] = cls.code
    expected = {name: value for name, value in results.items() if name != "spcclSuccess"}
    assert codes == expected


def test_compression_constants_match_header():
    from spccl import _compressed

    assert _compressed.DEFAULT_BLOCK_SIZE == DEFINES["SPCCL_COMPRESSION_DEFAULT_BLOCK"]
    assert _compressed._FLOAT32 == ENUMS["spcclDataType_t"]["spcclFloat32"]
