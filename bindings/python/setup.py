"""Build the nextok Python package (a CPython limited-API extension, abi3).

The extension links the static library of a nextok build (PIC, hidden
symbols): `make python` builds both. NEXTOK_BUILD_DIR names that build
(default: ../../build); its CMakeCache says whether PCRE2 and utf8proc were
linked, which the static library then needs.
"""
import os
import re
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("NEXTOK_BUILD_DIR", os.path.join(ROOT, "build")))


def cache_flag(name):
    """An option's value in the build's CMakeCache.txt ('' when absent)."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(name + r":\w+=(.*)", line.strip())
                if m:
                    return m.group(1)
    except OSError:
        pass
    return ""


def pkg_libs(module):
    out = subprocess.run(["pkg-config", "--libs", module], capture_output=True, text=True)
    return out.stdout.split() if out.returncode == 0 else []


libs = []
if cache_flag("NEXTOK_WITH_PCRE2").upper() in ("1", "ON", "TRUE", "YES"):
    libs += pkg_libs("libpcre2-8")
if cache_flag("NEXTOK_WITH_UTF8PROC").upper() in ("1", "ON", "TRUE", "YES"):
    libs += pkg_libs("libutf8proc")

static_lib = os.path.join(BUILD, "libnextok.a")
sources = sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src"))
                 if f.endswith(".c"))

ext = Extension(
    "nextok._nextok",
    sources=sources,
    include_dirs=[os.path.join(ROOT, "include"), os.path.join(HERE, "src")],
    define_macros=[("NEXTOK_EXPERIMENTAL", "1")],
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                        "-fvisibility=hidden"] + (["-Werror"] if os.environ.get("NEXTOK_WERROR") else []),
    extra_objects=[static_lib],
    extra_link_args=libs + ["-lpthread", "-lm"],
    depends=[static_lib] + sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src"))
                                  if f.endswith(".h")),
    py_limited_api=True,
)

setup(
    name="nextok",
    version="0.1.0",
    description="Logits to the next token: every sampler, exact and fast (C library bindings)",
    packages=["nextok"],
    package_data={"nextok": ["py.typed", "*.pyi"]},
    ext_modules=[ext],
    options={"bdist_wheel": {"py_limited_api": "cp38"}},
    python_requires=">=3.8",
)
