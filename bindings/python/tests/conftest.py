"""Shared fixtures: the CLI to compare against, the test data, random rows."""
import os
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
BUILD = os.environ.get("NEXTOK_BUILD_DIR", os.path.join(ROOT, "build"))
DATA = os.path.join(ROOT, "tests", "data")


@pytest.fixture(scope="session")
def cli():
    """Run the nextok CLI of the same build; returns stdout (checks the exit status)."""
    exe = os.environ.get("NEXTOK_CLI", os.path.join(BUILD, "nextok"))
    assert os.access(exe, os.X_OK), f"the CLI {exe} is missing: build first (make)"

    def run(*args, check=True):
        out = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
        if check:
            assert out.returncode == 0, f"nextok {' '.join(map(str, args))}: {out.stderr}"
        return out

    return run


@pytest.fixture
def rng():
    return np.random.default_rng(20261127)


def logits_row(rng, n_vocab, scale=3.0):
    """A row with a realistic spread: a few strong tokens over a noisy floor."""
    row = rng.standard_normal(n_vocab).astype(np.float32) * scale
    row[rng.integers(0, n_vocab, 5)] += 8.0
    return row
