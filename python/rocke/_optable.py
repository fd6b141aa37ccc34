"""The op table, read from librocke at import time (never a hand-kept list):
one OpInfo per row of include/rocke/ops.def. Layer: python bindings."""
import ctypes
from collections import namedtuple

from ._lib import RockeError, error_text, lib

OpInfo = namedtuple("OpInfo", "code name fn nin nin_min nout nout_min nreg rule sig flags feat hint attrs")
AttrSpec = namedtuple("AttrSpec", "key kind optional choices")

_TEXT = ("name", "fn", "sig", "hint", "attrs", "rule")
_NUMS = ("nin", "nin_min", "nout", "nout_min", "nreg", "flags", "feat")


def _row(code):
    row = {"code": code}
    for f in _TEXT:
        s = lib.rk_op_query_str(code, f.encode())
        if s is None:
            raise RockeError(error_text())
        row[f] = s.decode()
    out = ctypes.c_int64()
    for f in _NUMS:
        if not lib.rk_op_query_int(code, f.encode(), ctypes.byref(out)):
            raise RockeError(error_text())
        row[f] = out.value
    row["nin_min"] = bool(row["nin_min"])
    row["nout_min"] = bool(row["nout_min"])
    return OpInfo(**row)


def parse_attr_spec(text):
    """'key:kind[constraint], ?key:kind' -> [AttrSpec] (kinds i f s b l t)."""
    specs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        optional = part.startswith("?")
        key, _, rest = part.lstrip("?").partition(":")
        kind, choices = rest[:1], None
        if rest[1:2] == "{":
            choices = tuple(rest[2:rest.index("}")].split("|"))
        specs.append(AttrSpec(key, kind, optional, choices))
    return specs


OPS = tuple(_row(c) for c in range(1, lib.rk_op_table_size()))
BY_NAME = {op.name: op for op in OPS}
BY_FN = {op.fn: op for op in OPS}
ATTRS = {op.name: parse_attr_spec(op.attrs) for op in OPS}


def find(name):
    """Op by wire name ("arith.add") or builder name ("add")."""
    op = BY_NAME.get(name) or BY_FN.get(name)
    if op is None:
        raise RockeError("unknown op '%s' (the op table has %d ops; rocke.op_names() lists them)"
                         % (name, len(OPS)))
    return op
