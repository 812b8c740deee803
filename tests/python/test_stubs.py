"""The type stub of the extension (bindings/python/spccl/_spccl.pyi) against
the module it describes, and the package's own annotations.

- every public name of spccl._spccl (functions, classes, constants) and of
  each class is in the stub, and the stub names nothing the module lacks;
- each function's parameter count, and its parameter names where pybind11
  knows them, match the signature pybind11 writes in the docstring, and so
  does returning None or not;
- every public function and method of the package is fully annotated;
- with mypy installed (Debian: python3-mypy): ``mypy.stubtest`` on the
  module and ``mypy`` on the whole package pass.

One process, no communicator: ctest runs it as python_stubs.
"""
from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import spccl
import spccl._spccl as native
import spccl.torch.backend
import spccl.torch.hooks
import spccl.torch.launch

pytestmark = pytest.mark.stubs

STUB = Path(__file__).resolve().parents[2] / "bindings" / "python" / "spccl" / "_spccl.pyi"
ALLOWLIST = Path(__file__).resolve().parent / "stubtest_allowlist.txt"
MYPY_CONFIG = Path(__file__).resolve().parent / "mypy.ini"


class Signature:
    def __init__(self, params: List[str], returns_none: bool) -> None:
        self.params = params  # names, self excluded
        self.returns_none = returns_none


def stub_signature(node: ast.FunctionDef, method: bool) -> Signature:
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if method and not static:
        names = names[1:]
    returns_none = isinstance(node.returns, ast.Constant) and node.returns.value is None
    return Signature(names, returns_none)


def parse_stub() -> Tuple[Dict[str, object], Dict[str, Dict[str, object]]]:
    """Module-level names -> FunctionDef / ClassDef / "constant"; classes -> members."""
    tree = ast.parse(STUB.read_text())
    module: Dict[str, object] = {}
    classes: Dict[str, Dict[str, object]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            module[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            module[node.target.id] = "constant"
        elif isinstance(node, ast.ClassDef):
            module[node.name] = node
            classes[node.name] = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    return module, classes


def split_top_level(text: str) -> List[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def runtime_signature(obj: object, name: str) -> Signature:
    """From pybind11's docstring: ``name(self: T, arg0: int, x: float) -> None``."""
    first = (obj.__doc__ or "").splitlines()[0]
    match = re.fullmatch(rf"{re.escape(name)}\((.*)\) -> (.+)", first)
    assert match, f"{name}: no pybind11 signature in {first!r}"
    params = [p.split(":")[0].strip() for p in split_top_level(match.group(1))]
    if params and params[0] == "self":
        params = params[1:]
    return Signature(params, match.group(2).strip() == "None")


def public(names) -> set:
    return {n for n in names if not n.startswith("_")}


def compare(name: str, stub: Signature, runtime: Signature) -> List[str]:
    problems = []
    if len(stub.params) != len(runtime.params):
        problems.append(f"{name}: the stub has {len(stub.params)} parameters {stub.params}, "
                        f"the module {len(runtime.params)} {runtime.params}")
    else:
        for s, r in zip(stub.params, runtime.params):
            if not re.fullmatch(r"arg\d+", r) and s != r:
                problems.append(f"{name}: parameter {r!r} is {s!r} in the stub")
    if stub.returns_none != runtime.returns_none:
        problems.append(f"{name}: returns None in {'the stub' if stub.returns_none else 'the module'}"
                        " only")
    return problems


def test_stub_names_match_the_module():
    module, classes = parse_stub()
    runtime = public(dir(native))
    assert sorted(runtime - set(module)) == [], "in the module, missing from the stub"
    assert sorted(set(module) - runtime) == [], "in the stub, missing from the module"
    for cls_name, members in classes.items():
        cls = getattr(native, cls_name)
        runtime_members = public(dir(cls))
        assert sorted(runtime_members - set(members)) == [], f"{cls_name}: missing from the stub"
        assert sorted(set(members) - runtime_members) == [], f"{cls_name}: missing at runtime"


def test_stub_signatures_match_pybind11s():
    module, classes = parse_stub()
    problems: List[str] = []
    for name, node in module.items():
        if isinstance(node, ast.FunctionDef):
            problems += compare(name, stub_signature(node, False),
                                runtime_signature(getattr(native, name), name))
    for cls_name, members in classes.items():
        cls = getattr(native, cls_name)
        for name, node in members.items():
            attr = inspect.getattr_static(cls, name)
            is_property = any(isinstance(d, ast.Name) and d.id == "property"
                              for d in node.decorator_list)
            if isinstance(attr, property) or is_property:
                assert isinstance(attr, property) and is_property, f"{cls_name}.{name}: property"
                continue
            problems += compare(f"{cls_name}.{name}", stub_signature(node, True),
                                runtime_signature(getattr(cls, name), name))
    assert problems == []


def test_the_signature_check_sees_a_wrong_count():
    """The comparison itself: a stub with one parameter too many is caught."""
    node = ast.parse("def version(extra: int) -> int: ...").body[0]
    assert compare("version", stub_signature(node, False),
                   runtime_signature(native.version, "version"))


PUBLIC_MODULES = [spccl, spccl.torch.backend, spccl.torch.hooks, spccl.torch.launch]


def public_callables():
    seen = set()
    for module in PUBLIC_MODULES:
        names = getattr(module, "__all__", None) or [n for n in vars(module)
                                                     if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if getattr(obj, "__module__", "").startswith("spccl") and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{module.__name__}.{name}", obj


def unannotated(qualname: str, fn) -> List[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    missing = [p.name for i, p in enumerate(sig.parameters.values())
               if p.annotation is inspect.Parameter.empty
               and not (i == 0 and p.name in ("self", "cls"))]
    out = [f"{qualname}: parameter {m} has no annotation" for m in missing]
    if sig.return_annotation is inspect.Signature.empty and fn.__name__ != "__init__":
        out.append(f"{qualname}: no return annotation")
    return out


def test_public_api_is_annotated():
    problems: List[str] = []
    for qualname, obj in public_callables():
        if inspect.isclass(obj):
            for name, member in vars(obj).items():
                if name.startswith("_") and name != "__init__":
                    continue
                member = getattr(member, "__func__", member)
                if isinstance(member, property):
                    member = member.fget
                if inspect.isfunction(member) and member.__module__.startswith("spccl"):
                    problems += unannotated(f"{qualname}.{name}", member)
            for base in obj.__mro__[1:]:  # the mixins of Comm
                if base.__module__.startswith("spccl"):
                    for name, member in vars(base).items():
                        if not name.startswith("_") and inspect.isfunction(member):
                            problems += unannotated(f"{base.__name__}.{name}", member)
        elif inspect.isfunction(obj):
            problems += unannotated(qualname, obj)
    assert problems == []


def require_mypy() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (Debian: python3-mypy)")


def package_root() -> str:
    return str(Path(spccl.__file__).resolve().parents[1])


def test_mypy_stubtest():
    require_mypy()
    cmd = [sys.executable, "-m", "mypy.stubtest", "spccl._spccl", "--allowlist", str(ALLOWLIST),
           "--mypy-config-file", str(MYPY_CONFIG)]
    env = dict(os.environ, PYTHONPATH=package_root())
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_on_the_package():
    require_mypy()
    # Its cache outside the tree (ctest sets MYPY_CACHE_DIR in the build tree).
    cache = os.environ.get("MYPY_CACHE_DIR") or os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                                            f"spccl-mypy-{os.getuid()}")
    cmd = [sys.executable, "-m", "mypy", "-p", "spccl", "--cache-dir", cache,
           "--config-file", str(MYPY_CONFIG)]
    env = dict(os.environ, MYPYPATH=package_root())
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600,
                            cwd=package_root())
    assert result.returncode == 0, result.stdout + result.stderr


def test_work_is_exported():
    assert "Work" in spccl.__all__ and spccl.Work.__module__ == "spccl._work"
