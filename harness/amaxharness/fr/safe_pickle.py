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



class RefusedPickle(Exception):
    """The pickle asked for something other than plain data; nothing from it was executed."""


class _PlainDataUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise RefusedPickle(f"it asks for the global {module}.{name}")

    def persistent_load(self, pid):
        raise RefusedPickle("it uses a persistent id")


SCALARS = frozenset((str, int, float, bool, type(None)))


def _check_plain(value):
    """Walks the loaded value (iteratively: dumps can nest deeply) and rejects other types.
    Exact types only (a subclass could carry behaviour); only containers are pushed, and each
    once, so a list that a pickle's memo shares across many entries is walked once."""
    def refuse(item):
        raise RefusedPickle(f"it holds a {type(item).__name__}, which is not plain data")

    if type(value) in SCALARS:
        return
    if type(value) not in (dict, list, tuple):
        refuse(value)
    stack, seen = [value], {id(value)}
    scalars = SCALARS
    while stack:
        item = stack.pop()
        items = (*item.keys(), *item.values()) if type(item) is dict else item
        for x in items:
            t = type(x)
            if t in scalars:
                continue
            if t is dict or t is list or t is tuple:
                if id(x) not in seen:
                    seen.add(id(x))
                    stack.append(x)
                continue
            refuse(x)


def loads_plain(data: bytes):
    """Unpickles `data` if it is plain data; RefusedPickle if it asks for more, and
    pickle.UnpicklingError / EOFError / ValueError if it is not a complete pickle."""
    unpickler = _PlainDataUnpickler(io.BytesIO(data))
    value = unpickler.load()
    _check_plain(value)
    return value
