"""nextok: logits to the next token, exactly and fast.

Python bindings of the nextok C library. Logits are read in place from numpy
arrays (the buffer protocol or __array_interface__), torch tensors and DLPack
capsules: float32, float16 or bfloat16, 1-D rows or 2-D [B, V] batches.

    import numpy as np, nextok
    params = nextok.SamplingParams(temperature=0.7, top_p=0.9, seed=42)
    sampler = nextok.Sampler(params, n_vocab=logits.shape[-1])
    token = sampler.sample(logits)
    sampler.accept(token)

See bindings/python/README.md and the docstrings.
"""
from ._nextok import (  # noqa: F401
    CompiledGrammar,
    Error,
    Grammar,
    Matcher,
    Sampler,
    Session,
    Vocab,
    clear_batch_cache,
    SamplingParams,
    __version__,
    library_version,
    sample_batch,
    status_name,
)


__all__ = [
    "Error", "Sampler", "SamplingParams", "sample_batch", "clear_batch_cache", "status_name",
    "Vocab", "Session", "Grammar", "CompiledGrammar", "Matcher", "__version__",
    "library_version",
]
