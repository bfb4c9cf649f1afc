"""The type stubs (nextok/__init__.pyi) name everything the package exports,
and every public method and attribute of its classes; every export has a
docstring."""
import ast
import os

import nextok

STUBS = os.path.join(os.path.dirname(nextok.__file__), "__init__.pyi")


def stub_names():
    tree = ast.parse(open(STUBS).read())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            names = set()
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
            members[node.name] = names
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
    return top, members


def test_stubs_cover_the_package():
    assert os.path.exists(STUBS), "the stubs are installed with the package"
    top, members = stub_names()
    for name in nextok.__all__:
        assert name in top, f"{name} is missing from __init__.pyi"
        obj = getattr(nextok, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            public = {m for m in vars(obj) if not m.startswith("_")}
            missing = public - members[name]
            assert not missing, f"{name}: {sorted(missing)} missing from __init__.pyi"


def test_everything_has_a_docstring():
    for name in nextok.__all__:
        obj = getattr(nextok, name)
        if isinstance(obj, str):
            continue
        assert obj.__doc__, name
        if isinstance(obj, type):
            for m, v in vars(obj).items():
                if not m.startswith("_") and callable(v):
                    assert getattr(obj, m).__doc__, f"{name}.{m}"
