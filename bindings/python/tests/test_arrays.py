"""How logits arrive: numpy (buffer protocol / __array_interface__), torch
(DLPack), DLPack capsules under both names; read in place; bad arrays raise."""
import ctypes
import resource

import numpy as np
import pytest

import nextok
from conftest import logits_row


def sampler(v, **kw):
    return nextok.Sampler(nextok.SamplingParams(seed=3, temperature=0.9, **kw), v)


def test_numpy_dtypes_agree(rng):
    v = 3000
    row = logits_row(rng, v)
    s = sampler(v)
    half = row.astype(np.float16)
    # f16 rows are sampled as their exact float32 values
    assert s.sample(half) == s.sample(half.astype(np.float32))
    assert s.sample(row) == s.sample(row.reshape(1, v))


class ArrayInterfaceOnly:
    """An object that offers only numpy's __array_interface__ (no buffer protocol)."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


def test_array_interface_path(rng):
    v = 512
    row = logits_row(rng, v)
    s = sampler(v)
    assert s.sample(ArrayInterfaceOnly(row)) == s.sample(row)
    ro = row.copy()
    ro.flags.writeable = False
    assert s.sample(ArrayInterfaceOnly(ro)) == s.sample(row)  # reading a read-only array is fine


@pytest.mark.torch
def test_torch_tensors(rng):
    import torch
    v = 2000
    row = logits_row(rng, v)
    s = sampler(v)
    want = s.sample(row)
    t = torch.from_numpy(row)
    assert s.sample(t) == want
    assert s.sample(torch.utils.dlpack.to_dlpack(t)) == want
    assert s.sample(t.to(torch.float16)) == s.sample(row.astype(np.float16))
    bf = t.to(torch.bfloat16)
    assert s.sample(bf) == s.sample(bf.to(torch.float32))  # bf16 read exactly
    with pytest.raises(ValueError):
        s.sample(torch.from_numpy(np.tile(row, 2))[::2])  # not contiguous
    with pytest.raises(TypeError):
        s.sample(t.to(torch.float64))


@pytest.mark.torch
def test_capsule_is_consumed_once(rng):
    import torch
    v = 100
    cap = torch.utils.dlpack.to_dlpack(torch.from_numpy(logits_row(rng, v)))
    s = sampler(v)
    s.sample(cap)
    with pytest.raises(TypeError):
        s.sample(cap)  # used: DLPack capsules are single-use


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedVersioned(ctypes.Structure):
    _fields_ = [("version", DLVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


def versioned_capsule(arr, deleted, read_only=False):
    """A "dltensor_versioned" capsule over arr, built by hand (DLPack 1.0)."""
    shape = (ctypes.c_int64 * 1)(arr.shape[0])
    cb = DELETER(lambda p: deleted.append(p))
    m = DLManagedVersioned()
    m.version = DLVersion(1, 0)
    m.deleter = cb
    m.flags = 1 if read_only else 0
    m.dl_tensor = DLTensor(arr.ctypes.data, DLDevice(1, 0), 1, DLDataType(2, 32, 1), shape, None, 0)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    cap = new(ctypes.addressof(m), b"dltensor_versioned", None)
    return cap, (m, shape, cb, arr)  # keep-alive


def test_versioned_capsule(rng):
    v = 300
    row = logits_row(rng, v)
    deleted = []
    cap, keep = versioned_capsule(row, deleted)
    s = sampler(v)
    assert s.sample(cap) == s.sample(row)
    assert len(deleted) == 1  # the consumer called the deleter, once
    # a read-only versioned tensor is fine to read, refused as an output
    cap2, keep2 = versioned_capsule(np.zeros(16, np.int32).view(np.float32), deleted, read_only=True)
    s2 = nextok.Sampler(nextok.SamplingParams(temperature=0), 16)
    assert s2.sample(cap2) == 0


def test_refcounts_do_not_move(rng):
    import sys
    v = 1000
    row = logits_row(rng, v)
    p = nextok.SamplingParams(seed=1, top_k=10)
    s = nextok.Sampler(p, v)
    before = (sys.getrefcount(row), sys.getrefcount(p), sys.getrefcount(s))
    for _ in range(5000):
        s.sample(row)
        s.probs(row)
        s.logprobs(row, 3)
    batch = np.stack([row] * 4)
    out = np.empty(4, np.int32)
    nextok.sample_batch(batch, p, out=out)
    cached = sys.getrefcount(p)  # the batch cache holds p for its rows
    for _ in range(500):
        nextok.sample_batch(batch, p, out=out)
    assert sys.getrefcount(p) == cached
    nextok.clear_batch_cache()
    assert (sys.getrefcount(row), sys.getrefcount(p), sys.getrefcount(s)) == before
    assert sys.getrefcount(batch) == 2 and sys.getrefcount(out) == 2


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


@pytest.mark.torch
def test_dlpack_tensors_are_released():
    """Each call through __dlpack__ must call the deleter: 300 calls on fresh 4 MB
    tensors would hold 1.2 GB if it did not."""
    import torch
    v = 1 << 20
    s = nextok.Sampler(nextok.SamplingParams(temperature=0), v)
    for _ in range(20):
        s.sample(torch.randn(v))
    base = rss_mb()
    for _ in range(300):
        s.sample(torch.randn(v))
    assert rss_mb() - base < 200
