"""A pickle loader for untrusted input: plain data in, never code.

A pickle runs code only through globals: GLOBAL/STACK_GLOBAL/INST/OBJ and the extension
registry all go through `find_class`, and REDUCE/NEWOBJ/BUILD can only call what an earlier
global put on the stack. Refusing every `find_class` (and every persistent id) therefore leaves
exactly the plain opcodes: dicts, lists, tuples, strings, numbers, booleans and None, which is
all a Flight Recorder dump contains (PyTorch writes it with type tags off, so no
`torch.jit._pickle` globals either). The loaded value is checked again afterwards, so a set or
bytes object is refused too.
"""

from __future__ import annotations

import io
import pickle

ALLOWED_TYPES = (dict, list, tuple, str, int, float, bool, type(None))


class RefusedPickle(Exception):
    """The pickle asked for something other than plain data; nothing from it was executed."""


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise RefusedPickle(f"it asks for the global {module}.{name}")

    def persistent_load(self, pid):
        raise RefusedPickle("it uses a persistent id")


def _check_plain(value):
    """Walks the loaded value (iteratively: dumps can nest deeply) and rejects other types."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if not isinstance(item, ALLOWED_TYPES) or type(item) not in ALLOWED_TYPES:
            raise RefusedPickle(f"it holds a {type(item).__name__}, which is not plain data")
        if isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)


def loads_plain(data: bytes):
    """Unpickles `data` if it is plain data; RefusedPickle if it asks for more, and
    pickle.UnpicklingError / EOFError / ValueError if it is not a complete pickle."""
    unpickler = _PlainDataUnpickler(io.BytesIO(data))
    value = unpickler.load()
    _check_plain(value)
    return value
