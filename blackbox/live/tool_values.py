"""A wrapped tool's values as the cassette holds them: the model's arguments in, the result out and back.

Frameworks call a tool with more than the model's arguments and take more than JSON back from it:

- the *context* a framework passes (pydantic-ai's `RunContext`, the Agents SDK's `RunContextWrapper` /
  `ToolContext`, LangChain's injected state, store, tool-call id, `ToolRuntime`, `RunnableConfig`, callback
  managers) is not an argument the model gave: it is left out of the stored input and passed through untouched;
- *typed* arguments (google-genai's automatic function calling builds the annotated pydantic models and enums
  from the model's JSON) are stored as that JSON again;
- a *typed result* (a pydantic model, dataclass, TypedDict, enum, tuple) is stored as its JSON form, and replay
  hands the agent the same kind of value, rebuilt through the tool's return annotation: each framework then
  serialises it for the model exactly as it did in the recording (the Agents SDK with `str()`, LangChain with
  `json.dumps` or `str()`, pydantic-ai through pydantic), so what the model is told never changes.

Recording checks that promise before the agent sees the result: the stored form, read back as the cassette
reads it and rebuilt as replay rebuilds it, must be the same value (same types, same text).  When it is not
(no usable return annotation, a class that cannot be rebuilt from JSON), `keep` says so in one line naming the
tool, the reason and the remedy; the session refuses the run rather than record a different result.

Frameworks are recognised by the names of their classes, never imported here (nor pydantic, until a typed
value is met)."""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import re
import typing
import weakref
from collections.abc import Callable
from typing import Any

from blackbox.format.canonical import CanonicalError, decode_json, json_value
from blackbox.format.writing import json_body

__all__ = ["RESULT_ADVICE", "ToolShape", "context_value", "shape_of"]

RESULT_ADVICE = "return JSON values (dict, list, str, number, bool, None) from tools"

# (top-level package, class name) of the objects frameworks hand a tool beside the model's arguments; a class
# with one of these in its MRO, or an `Annotated` marker of one, is context.
_CONTEXT_CLASSES = frozenset({
    ("pydantic_ai", "RunContext"),
    ("agents", "RunContextWrapper"),  # ToolContext is one
    ("langchain_core", "InjectedToolArg"),  # InjectedState, InjectedStore, InjectedToolCallId
    ("langchain_core", "_DirectlyInjectedToolArg"),  # ToolRuntime
    ("langchain_core", "BaseRunManager"),  # CallbackManagerForToolRun
    ("langchain_core", "RunnableConfig"),
})
# The same names, for annotations that stay strings (a forward reference the hints cannot resolve).
_CONTEXT_WORDS = re.compile(r"\b(RunContext|RunContextWrapper|ToolContext|InjectedState|InjectedStore|"
                            r"InjectedToolArg|InjectedToolCallId|ToolRuntime|RunnableConfig|"
                            r"(Async)?CallbackManagerForToolRun)\b")
# Return annotations whose values replay hands back as stored (nothing to rebuild).
_AS_STORED: tuple[Any, ...] = (Any, object, str, bool, type(None), None)
_MISSING = object()


def _context_class(cls: Any) -> bool:
    mro = getattr(cls, "__mro__", None) if isinstance(cls, type) else None
    if mro is None:
        return False
    return any((getattr(c, "__module__", "").partition(".")[0], c.__name__) in _CONTEXT_CLASSES for c in mro)


def context_value(value: Any) -> bool:
    """Whether `value` is a framework's context object (by its class), whatever its parameter says."""
    return _context_class(type(value))


def _context_annotation(annotation: Any) -> bool:
    """Whether a parameter annotated so is filled in by the framework: a context class (or a generic alias of
    one), an `Annotated[..., InjectedState]` marker, or a union with one of them."""
    if isinstance(annotation, str):
        return bool(_CONTEXT_WORDS.search(annotation))
    if _context_class(annotation):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        markers = getattr(annotation, "__metadata__", ())
        return any(_context_class(m) or _context_class(type(m)) for m in markers) or \
            _context_annotation(typing.get_args(annotation)[0])
    if origin is not None:
        if _context_class(origin):
            return True
        if origin is typing.Union or type(annotation).__name__ == "UnionType":
            return any(_context_annotation(arm) for arm in typing.get_args(annotation) if arm is not type(None))
    return False


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The function's annotations, resolved where they can be (else the raw ones, strings included)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an unresolvable forward reference, a callable without annotations
        try:
            return dict(getattr(inspect.unwrap(fn), "__annotations__", None) or {})
        except Exception:
            return {}


def _plain(value: Any) -> bool:
    """Whether `value` is made of exactly the JSON types (no tuple, enum, str or dict subclass): then the
    cassette hands back what the tool returned (numbers as JSON numbers)."""
    todo = [value]
    while todo:
        item = todo.pop()
        kind = type(item)
        if kind is dict:
            todo.extend(item.values())
        elif kind is list:
            todo.extend(item)
        elif not (item is None or kind in (str, int, float, bool)):
            return False
    return True


def _typed(value: Any) -> bool:
    """A value a framework builds from the model's JSON: a pydantic model, a dataclass, an enum."""
    return isinstance(value, enum.Enum) or (dataclasses.is_dataclass(value) and not isinstance(value, type)) \
        or any(c.__name__ == "BaseModel" and c.__module__.startswith("pydantic") for c in type(value).__mro__)


def _same(a: Any, b: Any) -> bool:
    """The same value for every framework: same types all the way down and the same text (`repr`); a JSON
    number stays a number (1.0 and 1 are the cassette's one number, as for every plain result)."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool | enum.Enum) \
            and not isinstance(b, bool | enum.Enum):
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    try:
        if not bool(a == b):
            return False
        return isinstance(a, set | frozenset) or repr(a) == repr(b)
    except Exception:
        return False


def _describe(value: Any) -> str:
    return f"a {type(value).__name__}"


class ToolShape:
    """What Blackbox knows of one tool function: its context parameters and its return annotation."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    @functools.cached_property
    def _signature(self) -> inspect.Signature | None:
        try:
            return inspect.signature(self.fn)
        except (TypeError, ValueError):
            return None

    @functools.cached_property
    def _annotations(self) -> dict[str, Any]:
        return _hints(self.fn)

    @functools.cached_property
    def context(self) -> frozenset[str]:
        """The parameters the framework fills in (by their annotations)."""
        if self._signature is None:
            return frozenset()
        hints = self._annotations
        return frozenset(name for name, parameter in self._signature.parameters.items()
                         if _context_annotation(hints.get(name, parameter.annotation)))

    @functools.cached_property
    def returns(self) -> Any:
        """The return annotation to rebuild results through, or `_MISSING` (none, or one that holds JSON as is)."""
        annotation = self._annotations.get("return", _MISSING)
        if annotation is _MISSING or isinstance(annotation, str) or any(annotation is t for t in _AS_STORED):
            return _MISSING
        return annotation

    @functools.cached_property
    def _adapter(self) -> Any:
        """pydantic's TypeAdapter for the return annotation (None: pydantic missing, or a type it cannot build)."""
        try:
            from pydantic import ConfigDict, TypeAdapter

            try:
                return TypeAdapter(self.returns)
            except Exception:  # a plain class: allowed as itself, never rebuilt from JSON
                return TypeAdapter(self.returns, config=ConfigDict(arbitrary_types_allowed=True))
        except Exception:
            return None

    # -- the input --------------------------------------------------------------------------------------

    def model_input(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The stored input, as the model asked for it: the arguments bound to the parameter names without the
        framework's context (a framework that calls `get_weather(ctx, "Paris")` stores `{"city": "Paris"}`),
        `{}` for none, and a single dict argument as that dict.  A callable whose signature cannot bind them
        keeps the value for one argument and the list for several."""
        context = self.context
        if context or any(context_value(a) for a in args) or any(context_value(v) for v in kwargs.values()):
            return self._without_context(args, kwargs, context)
        if not args:
            return dict(kwargs)
        if len(args) == 1 and not kwargs and isinstance(args[0], dict):
            return args[0]
        signature = self._signature
        try:
            if signature is None:
                raise TypeError
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return (args[0] if len(args) == 1 else list(args)) if not kwargs else {"args": list(args),
                                                                                  "kwargs": dict(kwargs)}
        return self._stored(bound)

    def _stored(self, bound: dict[str, Any], context: frozenset[str] = frozenset()) -> dict[str, Any]:
        stored: dict[str, Any] = {}
        parameters = self._signature.parameters if self._signature is not None else {}
        for name, value in bound.items():
            kind = parameters[name].kind if name in parameters else inspect.Parameter.KEYWORD_ONLY
            if name in context or (kind is not inspect.Parameter.VAR_POSITIONAL and context_value(value)):
                continue
            if kind is inspect.Parameter.VAR_KEYWORD:
                stored.update({k: v for k, v in value.items() if k not in context and not context_value(v)})
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                stored[name] = [v for v in value if not context_value(v)]
            else:
                stored[name] = value
        return stored

    def _without_context(self, args: tuple[Any, ...], kwargs: dict[str, Any], context: frozenset[str]) -> Any:
        signature = self._signature
        try:
            if signature is None:
                raise TypeError
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:  # no bindable signature: the values that are not context
            rest = [a for a in args if not context_value(a)]
            named = {k: v for k, v in kwargs.items() if k not in context and not context_value(v)}
            return named if not rest else (rest[0] if len(rest) == 1 and not named else {"args": rest, **named})
        return self._stored(bound, context)

    # -- the result -------------------------------------------------------------------------------------

    def keep(self, name: str, result: Any) -> tuple[Any, str | None]:
        """(the result's stored JSON form, None), or (None, why replay could not hand it back as it was)."""
        plain = _plain(result)
        try:
            stored = json_value(result if plain else _jsonable(result), where=lambda: f"the result of tool {name!r}")
        except CanonicalError as exc:
            return None, f"{exc}; {RESULT_ADVICE}"
        except Exception as exc:  # pydantic could not serialise it
            return None, (f"tool {name!r} returned {_describe(result)}, which has no JSON form "
                          f"({type(exc).__name__}); return a pydantic model, a dataclass or JSON values")
        if plain and self.returns is _MISSING:
            return stored, None
        again = self.rebuild(decode_json(json_body(stored)))  # as the cassette file holds it
        if _same(again, result):
            return stored, None
        kind = type(result).__name__
        if self.returns is _MISSING:
            why = "its return type is not annotated" if "return" not in self._annotations else \
                "its return annotation is not a type replay can rebuild it through"
            return None, (f"tool {name!r} returned {_describe(result)} that replay could not hand back as it was "
                          f"({why}); annotate its return type (-> {kind}) so replay rebuilds it, or return JSON "
                          "values (dict, list, str, number, bool, None)")
        return None, (f"tool {name!r} returned {_describe(result)} that replay could not hand back as it was (it "
                      f"does not come back from its JSON form through the return annotation as the same {kind}); "
                      "return JSON values, or a pydantic model or dataclass made of them, and leave a tool that "
                      "returns the framework's own objects (a LangGraph Command) unwrapped")

    def rebuild(self, value: Any) -> Any:
        """A stored result as the tool returned it: rebuilt through the return annotation, or as stored when
        there is none or it does not fit (a forked value of another shape is handed over as given)."""
        if self.returns is _MISSING or self._adapter is None:
            return value
        try:
            return self._adapter.validate_python(value)
        except Exception:
            return value


def _jsonable(value: Any) -> Any:
    """A typed value's JSON form as pydantic writes it (models and dataclasses by field, enums by value)."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


def typed_argument_json(value: Any) -> Any:
    """An argument a framework built from the model's JSON (a pydantic model, dataclass or enum), as JSON
    again; any other value unchanged (for `json_value` to accept or refuse)."""
    if _typed(value):
        return _jsonable(value)
    if type(value) in (list, tuple):
        return [typed_argument_json(v) for v in value]
    if type(value) is dict:
        return {k: typed_argument_json(v) for k, v in value.items()}
    return value


_SHAPES: weakref.WeakKeyDictionary[Any, ToolShape] = weakref.WeakKeyDictionary()


def shape_of(fn: Callable[..., Any]) -> ToolShape:
    """The shape of `fn`, worked out once per function."""
    try:
        shape = _SHAPES.get(fn)
        if shape is None:
            shape = _SHAPES[fn] = ToolShape(fn)
        return shape
    except TypeError:  # not weakly referable: worked out on each call
        return ToolShape(fn)
