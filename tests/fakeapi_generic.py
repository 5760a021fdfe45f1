"""A brain for the fake API that answers any agent: it reads the tools and the output format a request asks
for and plays a plausible model, for every provider (Anthropic Messages, OpenAI chat and Responses, Gemini).

What it answers, from the request alone (so a replayed or retried call gets the same answer):

1. a tool forced by name (`tool_choice` / Gemini's `allowedFunctionNames`): a call of that tool;
2. else every ordinary tool the conversation has not called yet, all in one turn (parallel calls), each with
   arguments made from its JSON schema (`example_of`);
3. else a handoff (a tool named `transfer_to_…`, as the Agents SDK and LangGraph name them) when none was taken;
4. else the final answer: a call of the output tool when the agent declared one and it was not called yet
   (pydantic-ai's `final_result…`; a tool named after its schema, LangChain's structured-output tool), JSON
   matching the schema when the request asks for structured output (`response_format`, `text.format`, Gemini's
   `responseJsonSchema`, Anthropic's `output_config`), plain text otherwise.  Its first free text field, or the
   text, quotes the tool results it was sent, so a fork that changes a result changes the outcome.

A conversation past `MAX_TURNS` model turns gets its final answer, so no agent loops for ever.

Which API a body belongs to is read from the body (`api_of`): the fake API hands a brain the body only.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakeapi import anthropic_message, chat_completion, response_object
from tests.fakeapi_gemini import gemini_response

__all__ = ["api_of", "example_of", "generic_brain"]

MAX_TURNS = 8  # a conversation this long gets its final answer whatever it asks for
_CHAT_ROLES = {"system", "developer", "tool", "function"}


def api_of(body: dict[str, Any]) -> str:
    """"anthropic", "openai" (chat), "responses" or "gemini", from a request body."""
    if "contents" in body:
        return "gemini"
    if "messages" not in body:
        return "responses"
    messages = body.get("messages") or []
    chat = any(isinstance(m, dict) and m.get("role") in _CHAT_ROLES for m in messages) \
        or any(isinstance(t, dict) and "function" in t for t in body.get("tools") or []) \
        or "response_format" in body or "max_completion_tokens" in body or "stream_options" in body
    return "anthropic" if "max_tokens" in body and not chat else "openai"


# -- JSON schemas -------------------------------------------------------------------------------------------

_WORDS = {"city": "Paris", "location": "Paris", "place": "Paris", "destination": "Paris", "name": "Alice",
          "user": "Alice", "guest": "Alice", "customer": "Alice", "query": "weather", "question": "weather",
          "topic": "weather", "language": "en", "country": "France", "email": "alice@example.com"}
_FORMATS = {"date": "2026-12-12", "date-time": "2026-12-12T09:00:00Z", "time": "09:00:00", "email":
            "alice@example.com", "uri": "https://example.com", "uuid": "00000000-0000-4000-8000-000000000000"}


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
        path = schema["$ref"].lstrip("#/").split("/")
        target: Any = root
        for part in path:
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema, seen = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}, seen + 1
    return schema


class _Note:
    """Text for the first free string field of an answer (the tool results), used once."""

    def __init__(self, text: str | None) -> None:
        self.text = text

    def take(self) -> str | None:
        text, self.text = self.text, None
        return text


def example_of(schema: Any, root: dict[str, Any] | None = None, name: str = "", note: _Note | None = None,
               depth: int = 0) -> Any:
    """A value valid for `schema` (JSON Schema, or Gemini's Schema with upper-case types): every property
    filled, enums' first value, one array item, strings chosen from the property's name or format."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or depth > 12:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        arms = [arm for arm in schema.get(key) or [] if _resolve(arm, root).get("type") not in ("null", "NULL")]
        if arms:
            return example_of(arms[0], root, name, note, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for arm in schema["allOf"]:
            merged.update(_resolve(arm, root))
        return example_of(merged, root, name, note, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "null")
    kind = str(kind).lower() if kind is not None else ("object" if "properties" in schema else "string")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: example_of(value, root, key, note, depth + 1) for key, value in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 1))
        items = schema.get("items") or {}
        if isinstance(items, list):  # a tuple schema
            return [example_of(item, root, name, note, depth + 1) for item in items]
        return [example_of(items, root, name, note, depth + 1) for _ in range(count)]
    if kind == "integer":
        if "exclusiveMinimum" in schema:
            return int(schema["exclusiveMinimum"]) + 1
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if schema.get("format") in _FORMATS:
        return _FORMATS[schema["format"]]
    word = _WORDS.get(name.lower())
    if word is None and note is not None:
        word = note.take()
    return word or (name or "example")


# -- the conversation ---------------------------------------------------------------------------------------


def _tools(body: dict[str, Any], api: str) -> dict[str, dict[str, Any]]:
    """The request's function tools: name → parameters schema."""
    found: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if api == "gemini":
            for declaration in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
                schema = (declaration.get("parametersJsonSchema") or declaration.get("parameters_json_schema")
                          or declaration.get("parameters") or {})
                found[declaration["name"]] = schema
        elif "function" in tool:
            found[tool["function"]["name"]] = tool["function"].get("parameters") or {}
        elif tool.get("type") in (None, "function", "custom") and "name" in tool:
            found[tool["name"]] = tool.get("input_schema") or tool.get("parameters") or {}
    return found


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts
        return " ".join(_text(part.get("text", part.get("output", ""))) if isinstance(part, dict) else _text(part)
                        for part in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _history(body: dict[str, Any], api: str) -> tuple[list[str], list[str], int]:
    """(tools called so far, the tool results sent back, model turns so far)."""
    called: list[str] = []
    results: list[str] = []
    turns = 0
    if api == "gemini":
        for content in body.get("contents") or []:
            turns += content.get("role") == "model"
            for part in content.get("parts") or []:
                if "functionCall" in part:
                    called.append(part["functionCall"].get("name", ""))
                if "functionResponse" in part:
                    results.append(_text(part["functionResponse"].get("response")))
    elif api == "responses":
        items = body.get("input")
        for item in items if isinstance(items, list) else []:
            if item.get("type") == "function_call":
                called.append(item.get("name", ""))
            elif item.get("type") == "function_call_output":
                results.append(_text(item.get("output")))
            turns += item.get("role") == "assistant" or item.get("type") == "function_call"
    else:
        for message in body.get("messages") or []:
            turns += message.get("role") == "assistant"
            content = message.get("content")
            for call in message.get("tool_calls") or []:
                called.append(call["function"]["name"])
            if message.get("role") == "tool":
                results.append(_text(content))
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use":
                    called.append(block.get("name", ""))
                elif block.get("type") == "tool_result":
                    results.append(_text(block.get("content")))
    return called, results, turns


def _forced(body: dict[str, Any], api: str) -> str | None:
    """The tool the request forces by name, if any."""
    choice = body.get("tool_choice")
    if api == "gemini":
        config = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {})
        names = config.get("allowedFunctionNames") or []
        return names[0] if config.get("mode") == "ANY" and len(names) == 1 else None
    if isinstance(choice, dict):
        if api == "anthropic" and choice.get("type") == "tool":
            return choice.get("name")
        return (choice.get("function") or {}).get("name") or choice.get("name")
    return None


def _required(body: dict[str, Any], api: str) -> bool:
    """The request demands some tool call (`required`, Anthropic's `any`, Gemini's mode ANY)."""
    choice = body.get("tool_choice")
    if api == "gemini":
        return ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode") == "ANY"
    return choice == "required" or (isinstance(choice, dict) and choice.get("type") in ("any", "required"))


def _output_schema(body: dict[str, Any], api: str) -> dict[str, Any] | None:
    """The JSON schema of the structured output the request asks for, if any."""
    if api == "gemini":
        config = body.get("generationConfig") or {}
        return (config.get("responseJsonSchema") or config.get("response_json_schema")
                or config.get("responseSchema"))
    if api == "responses":
        form = (body.get("text") or {}).get("format") or {}
        return form.get("schema") if form.get("type") == "json_schema" else None
    if api == "openai":
        form = body.get("response_format") or {}
        return (form.get("json_schema") or {}).get("schema") if form.get("type") == "json_schema" else None
    form = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
    return form.get("schema") if form.get("type") == "json_schema" else None


def _output_tool(name: str, schema: dict[str, Any]) -> bool:
    """pydantic-ai's `final_result…`, or a tool named after its schema (LangChain's structured output: the class
    name, where function tools are snake_case)."""
    return name.startswith("final_result") or (bool(name) and (schema.get("title") == name or name[0].isupper()))


def _reply(api: str, body: dict[str, Any], text: str | None, calls: list[tuple[str, Any]]) -> dict[str, Any]:
    model = str(body.get("model") or "gemini-2.5-flash")
    if api == "anthropic":
        return anthropic_message(text=text, tool_uses=calls, model=model)
    if api == "responses":
        return response_object(text=text, tool_calls=calls, model=model)
    if api == "gemini":
        return gemini_response(text=text, calls=calls)
    return chat_completion(content=text, tool_calls=calls, model=model)


def generic_brain(body: dict[str, Any]) -> dict[str, Any]:
    """The answer to any model request (see the module docstring)."""
    api = api_of(body)
    tools = _tools(body, api)
    called, results, turns = _history(body, api)
    note = "; ".join(results) or "no tool was needed"
    forced = _forced(body, api)
    if forced is not None and forced in tools:
        return _reply(api, body, None, [(forced, example_of(tools[forced], note=_Note(note)))])
    handoffs = [name for name in tools if name.startswith("transfer_to_")]
    outputs = [name for name, schema in tools.items() if _output_tool(name, schema)]
    if turns < MAX_TURNS:
        fresh = [name for name in tools if name not in called and name not in handoffs and name not in outputs]
        if fresh:
            return _reply(api, body, None, [(name, example_of(tools[name])) for name in fresh])
        if handoffs and not any(name.startswith("transfer_to_") for name in called):
            return _reply(api, body, None, [(handoffs[0], example_of(tools[handoffs[0]]))])
        unused = [name for name in outputs if name not in called]
        if unused:
            return _reply(api, body, None, [(unused[0], example_of(tools[unused[0]], note=_Note(note)))])
    schema = _output_schema(body, api)
    if schema is not None:
        return _reply(api, body, json.dumps(example_of(schema, note=_Note(note)), ensure_ascii=False), [])
    if _required(body, api) and tools and turns < MAX_TURNS:  # a tool must be called: the first one again
        first = next(iter(tools))
        return _reply(api, body, None, [(first, example_of(tools[first]))])
    return _reply(api, body, f"Done: {note}", [])
