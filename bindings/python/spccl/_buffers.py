"""numpy arrays and torch CPU tensors as (address, count, spccl type).

The C++ layer takes raw addresses, so every check on what a caller hands
in happens here, before any rank starts communicating: the dtype has an
spccl type, the memory is one C-contiguous block on the host, outputs are
writable and of the size the collective fills. Each failure raises
:class:`spccl.InvalidArgumentError` naming the argument.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ._errors import InvalidArgumentError

# spcclDataType_t values (include/spccl.h).
_NUMPY_TYPES = {
    np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.int32): 2, np.dtype(np.uint32): 3,
    np.dtype(np.int64): 4, np.dtype(np.uint64): 5, np.dtype(np.float16): 6,
    np.dtype(np.float32): 7, np.dtype(np.float64): 8,
}
_TORCH_TYPE_NAMES = {  # torch 1.13 has no uint32/uint64
    "int8": 0, "uint8": 1, "int32": 2, "int64": 4, "float16": 6, "float32": 7, "float64": 8,
    "bfloat16": 9,
}


def _torch() -> Any:
    """torch if the program imported it (a tensor cannot exist otherwise)."""
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def is_sparse_coo_tensor(x: Any) -> bool:
    return is_tensor(x) and x.layout == _torch().sparse_coo


@dataclass(frozen=True)
class Buffer:
    """One checked array: ``obj`` keeps the memory alive while spccl uses it."""

    obj: Any
    address: int
    count: int
    dtype: int  # spcclDataType_t


def spccl_type(x: Any, name: str) -> int:
    """The spcclDataType_t of an array's or tensor's dtype."""
    if is_tensor(x):
        dtype_name = str(x.dtype).replace("torch.", "")
        if dtype_name not in _TORCH_TYPE_NAMES:
            raise InvalidArgumentError(
                f"{name}: dtype {x.dtype} is not supported by spccl "
                f"(supported: {', '.join('torch.' + t for t in _TORCH_TYPE_NAMES)})", 3)
        return _TORCH_TYPE_NAMES[dtype_name]
    if isinstance(x, np.ndarray):
        dtype = x.dtype.newbyteorder("=") if x.dtype.byteorder in "<>" else x.dtype
        if dtype not in _NUMPY_TYPES:
            raise InvalidArgumentError(
                f"{name}: dtype {x.dtype} is not supported by spccl "
                f"(supported: {', '.join(str(t) for t in _NUMPY_TYPES)})", 3)
        if not x.dtype.isnative:
            raise InvalidArgumentError(f"{name}: dtype {x.dtype} is not in native byte order", 3)
        return _NUMPY_TYPES[dtype]
    raise InvalidArgumentError(
        f"{name}: expected a numpy.ndarray or a torch.Tensor, got {type(x).__name__}", 3)


def as_buffer(x: Any, name: str, *, writable: bool = False) -> Buffer:
    """Checks x (see the module docstring) and returns its memory."""
    dtype = spccl_type(x, name)
    if is_tensor(x):
        if x.layout != _torch().strided:
            raise InvalidArgumentError(f"{name}: a {x.layout} tensor is not a dense buffer; "
                                       "sparse COO tensors go to sparse_all_reduce", 3)
        if x.device.type != "cpu":
            raise InvalidArgumentError(f"{name}: tensor is on {x.device}; this build of spccl "
                                       "takes CPU tensors only", 3)
        if not x.is_contiguous():
            raise InvalidArgumentError(f"{name}: tensor is not contiguous (strides {x.stride()} for "
                                       f"shape {tuple(x.shape)}); pass {name}.contiguous()", 3)
        return Buffer(x, x.data_ptr(), x.numel(), dtype)
    if not x.flags.c_contiguous:
        raise InvalidArgumentError(f"{name}: array is not C-contiguous (strides {x.strides} for "
                                   f"shape {x.shape}); pass numpy.ascontiguousarray({name})", 3)
    if writable and not x.flags.writeable:
        raise InvalidArgumentError(f"{name}: array is read-only", 3)
    return Buffer(x, x.ctypes.data, x.size, dtype)


def new_like(x: Any, shape: Sequence[int]) -> Any:
    """An uninitialised array or tensor of x's kind and dtype."""
    if is_tensor(x):
        return _torch().empty(tuple(shape), dtype=x.dtype)
    return np.empty(tuple(shape), dtype=x.dtype)


def copy_of(x: Any) -> Any:
    """A copy owning its memory (a slice would keep its whole base alive)."""
    return x.clone() if is_tensor(x) else x.copy()


def output(out: Any, like: Buffer, count: int, shape: Sequence[int], name: str = "out") -> Buffer:
    """The output buffer: out checked against the element type and count the
    collective writes, or a new array of shape when out is None."""
    if out is None:
        return as_buffer(new_like(like.obj, shape), name, writable=True)
    buf = as_buffer(out, name, writable=True)
    if buf.dtype != like.dtype:
        raise InvalidArgumentError(f"{name}: dtype {out.dtype} differs from the input's "
                                   f"{like.obj.dtype}", 3)
    if buf.count != count:
        raise InvalidArgumentError(f"{name}: has {buf.count} elements, the collective writes "
                                   f"{count} (shape {tuple(shape)})", 3)
    return buf


def leading_blocks(x: Buffer, size: int, name: str) -> int:
    """Elements per rank when x's first dimension is split in size equal blocks."""
    shape = tuple(x.obj.shape)
    if len(shape) == 0 or shape[0] % size:
        raise InvalidArgumentError(f"{name}: the first dimension of shape {shape} must be a "
                                   f"multiple of the communicator size {size}", 3)
    return x.count // size
