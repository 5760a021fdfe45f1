"""Writes `format/payload_views`: the readers' msgspec Structs of the payload shapes `format/payloads` declares.

The shapes are declared once, as the TypedDicts writers build (`payloads`); this module turns each into the
Struct readers convert a payload into, so the two forms cannot drift apart: `python -m blackbox.format.view_maker
> blackbox/format/payload_views.py` after a change there (tests/test_typed.py asks for it).  Each field becomes:

- a one-value `Literal` named `type` or `event`: the Struct's tag (msgspec picks the member of a union by it);
- a required key: a required field, unless `payloads.Read` gives the default a reader takes when it is absent;
- a `NotRequired` key: `UNSET` when absent;
- its type with every TypedDict as its view (`<Name>View`), or the wider type `Read.as_type` names.

Required fields come first (msgspec's rule), each group in the declared order.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from typing import Any

from blackbox.format import payloads

__all__ = ["generate"]

_HEADER = '''"""The payload shapes as readers hold them, generated from `format/payloads` by `format/view_maker`: do not
edit.

`python -m blackbox.format.view_maker > blackbox/format/payload_views.py` writes it again (tests/test_typed.py
holds it current).  Read payloads through `format/typed`, which picks the view of a step type and says why a
payload does not fit.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
{names}
]
'''


def _spell(tp: Any) -> str:
    """A type as the generated module writes it, each TypedDict as its view."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return "Any"
    if isinstance(tp, type) and typing.is_typeddict(tp):
        return f"{tp.__name__}View"
    if isinstance(tp, type) and origin is None:
        return tp.__name__
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(v) for v in typing.get_args(tp))}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_spell(arg) for arg in typing.get_args(tp))
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_spell(arg) for arg in typing.get_args(tp))}]"
    raise TypeError(f"view_maker cannot spell {tp!r}: give the field a Read(as_type=...)")


def _field(name: str, tp: Any) -> tuple[str, str | None, bool]:
    """(the field's line, its tag value when it is the tag, whether it is required)."""
    optional = typing.get_origin(tp) is typing.NotRequired
    if optional:
        tp = typing.get_args(tp)[0]
    read = payloads.Read()
    if typing.get_origin(tp) is typing.Annotated:
        tp, *extras = typing.get_args(tp)
        read = next((extra for extra in extras if isinstance(extra, payloads.Read)), read)
    literal = typing.get_args(tp) if typing.get_origin(tp) is typing.Literal else ()
    if name in ("type", "event") and len(literal) == 1 and not optional:
        return "", str(literal[0]), True
    spelled = read.as_type or _spell(tp)
    if optional:
        line = f"    {name}: Any = UNSET" if spelled == "Any" else f"    {name}: {spelled} | UnsetType = UNSET"
        return line, None, False
    if read.default is not payloads.Read().default:
        default = json.dumps(read.default) if isinstance(read.default, str) else repr(read.default)
        return f"    {name}: {spelled} = {default}", None, False
    return f"    {name}: {spelled}", None, True


#: What a view adds to its fields for its readers.
_METHODS = {"ToolResult": (
    "",
    "    @property",
    "    def failed(self) -> bool:",
    '        """Whether the tool raised: the step holds its error (a recorded `null` result is None, not UNSET)."""',
    "        return self.error is not UNSET",
)}


def _view(shape: Any) -> str:
    hints = typing.get_type_hints(shape, include_extras=True)
    fields = [_field(name, hints[name]) for name in shape.__annotations__]
    tag = next(((name, value) for name, (_, value, _) in zip(shape.__annotations__, fields, strict=True)
                if value is not None), None)
    options = "frozen=True, gc=False" + (f', tag_field="{tag[0]}", tag="{tag[1]}"' if tag else "")
    doc = (shape.__doc__ or "").strip().splitlines()
    lines = [f"class {shape.__name__}View(msgspec.Struct, {options}):"]
    if doc and not doc[0].startswith(f"{shape.__name__}("):
        lines.append(f'    """{doc[0]}"""' if len(doc) == 1 else '    """' + "\n".join(doc) + '"""')
    lines += [line for line, value, required in fields if value is None and required]
    lines += [line for line, value, required in fields if value is None and not required]
    lines += _METHODS.get(shape.__name__, ())
    return "\n".join(lines)


_UNIONS = {"PartView": payloads.Part, "ModelOutputView": payloads.ModelOutput, "MetadataView": payloads.Metadata}


def generate() -> str:
    """The text of `format/payload_views.py`."""
    shapes = list(payloads.SHAPES.values())
    names = [f"{shape.__name__}View" for shape in shapes] + list(_UNIONS)
    out = [_HEADER.format(names="\n".join(f'    "{n}",' for n in sorted(names)))]
    needs_literal = False
    for shape in shapes:
        text = _view(shape)
        needs_literal = needs_literal or "Literal[" in text
        out.append("\n" + text + "\n")
    out += [f"\n{name}: TypeAlias = {_spell(union)}" for name, union in _UNIONS.items()]
    text = "\n".join(out) + "\n"
    if needs_literal:
        text = text.replace("from typing import Any, TypeAlias", "from typing import Any, Literal, TypeAlias")
    return text


if __name__ == "__main__":
    sys.stdout.write(generate())
