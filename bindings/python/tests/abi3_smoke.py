"""Run by every CPython found (tests/run_abi3.py): the one abi3 build imports
and samples on each. No numpy there: rows come through __array_interface__
over array.array, and through the buffer protocol where the interpreter is
3.11+. Prints one line of results that must be the same everywhere."""
import array
import sys

import nextok


class Row:
    """__array_interface__ over an array.array of float32 (no numpy needed)."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = {"version": 3, "typestr": "<f4", "shape": (len(a),),
                                    "data": (a.buffer_info()[0], False), "strides": None}


v = 1000
row = array.array("f", [((i * 7919) % 1000) / 100.0 - 5.0 for i in range(v)])
p = nextok.SamplingParams(seed=42, temperature=0.8, top_p=0.9, repetition_penalty=1.2)
s = nextok.Sampler(p, v)
out = []
for _ in range(8):
    t = s.sample(Row(row))
    s.accept(t)
    out.append(t)
if sys.version_info >= (3, 11):  # the buffer protocol is in the 3.11 stable ABI
    s.reset()
    assert [s.sample(row) for _ in range(1)] == out[:1]
try:
    nextok.Sampler(nextok.SamplingParams(top_p=2.0), v)
except nextok.Error as e:
    out.append(e.status)
print(" ".join(map(str, out)))
