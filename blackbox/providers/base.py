"""`CodecProvider`, the base of every provider: one class per API, its facts as class data.

A provider class names its API's facts (`api`, from `blackbox.apis`), the endpoint it answers (`suffix`, and
where it may narrow that: `hosts`, `path_prefixes`), the request controls it keeps, its stream codec, and its
codec as methods that read that class data, in both directions: SDK request → neutral `model_input`
(recording) and neutral `model_input` → request (what-if).  So a dialect of an API (a server that speaks it
with a few fields of its own) is a subclass that changes the data, and a new API a class of its own.
The defaults here serve the APIs whose request is a JSON body POSTed to a fixed path; an API that carries
facts outside the body (Gemini's model in the path, Azure's deployment) overrides `matches` / `body_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from blackbox.apis import ApiFacts
from blackbox.format.canonical import decode_json
from blackbox.format.origin import Origin, origin_of
from blackbox.format.payloads import ModelInput, ModelOutput
from blackbox.format.tokens import Tokens
from blackbox.providers.neutral import CallIds, unsupported, wants_stream
from blackbox.providers.origins import Slots, no_slots
from blackbox.providers.outgoing import sent_as
from blackbox.providers.stream import StreamCodec
from blackbox.wire import Request

__all__ = ["CodecProvider"]


class CodecProvider:
    """One API's wire format.  Subclasses set the class data and the codec functions; see the module doc."""

    name: ClassVar[str]  # the registry name: anthropic | openai | responses | azure | …
    label: ClassVar[str]  # how messages name the API
    api: ClassVar[ApiFacts]  # keys, base URL, model names
    suffix: ClassVar[str]  # the path (without a trailing slash) the API's model calls end with
    kept_params: ClassVar[Mapping[str, str]]  # request field -> the neutral `params` name it is kept under
    #: Neutral `params` name -> the field `build_request` sends it as, where several fields keep it.
    sent_params: ClassVar[Mapping[str, str]] = {}
    #: `kept_params` backwards, `sent_params` preferred: neutral name -> request field (derived, per class).
    sent_fields: ClassVar[Mapping[str, str]] = {}
    #: Hosts (a name, or a domain its subdomains share) this provider's requests go to; () for any host.
    hosts: ClassVar[tuple[str, ...]] = ()
    #: Path prefixes its requests start with (a server's base path); () for any path.
    path_prefixes: ClassVar[tuple[str, ...]] = ()
    stream: ClassVar[StreamCodec]  # the API's event stream: assembles a recorded one, synthesizes a replayed one
    #: Whether a model name of `api` means this provider when nothing else says (chat over Responses).
    infers: ClassVar[bool] = True
    #: Where a response body holds its id and model: what a recorded call's unhashed `origin` keeps and a
    #: replayed response is given back (docs/format.md, "Origin"), with its calls' ids (`call_slots`).
    response_id_field: ClassVar[str] = "id"
    response_model_field: ClassVar[str] = "model"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kept_params = getattr(cls, "kept_params", None)
        if kept_params is not None:
            cls.sent_fields = sent_as(kept_params, **cls.sent_params)

    def matches(self, request: Request) -> bool:
        """Whether `request` is a model call of this API (at its hosts and below its path prefixes, if named)."""
        if request.method != "POST" or not request.route.endswith(self.suffix):
            return False
        if self.hosts and not any(request.host == host or request.host.endswith(f".{host}") for host in self.hosts):
            return False
        return not self.path_prefixes or request.route.startswith(self.path_prefixes)

    def matches_shape(self, request: Request) -> bool | None:
        """`matches(request)` when the method, host, path and query decide it alone (then `route` remembers it
        for every request of that shape), None when the headers may change it (asked on every request).  A
        provider that overrides `matches` overrides this too, or is asked every time."""
        return self.matches(request) if type(self).matches is CodecProvider.matches else None

    def body_of(self, request: Request) -> dict[str, Any]:
        """The request's JSON body as the API means it (a provider may fold in what the path says)."""
        try:
            body = decode_json(request.body)
        except ValueError:
            raise unsupported("a model request whose body is not JSON", "send a JSON request") from None
        if not isinstance(body, dict):
            raise unsupported("a model request whose body is not a JSON object", "send a JSON object")
        return body

    def read_request(self, request: Request, ids: CallIds) -> tuple[dict[str, Any], ModelInput]:
        """`body_of` the request and its `normalize_request`, as the session reads every model call; an API may
        do both in one pass.  The engines read only the body's model and stream flag."""
        body = self.body_of(request)
        return body, self.normalize_request(body, ids)

    def is_stream(self, body: dict[str, Any]) -> bool:
        """Whether the request asks for a server-sent-event stream."""
        return wants_stream(body)

    def normalize_request(self, body: dict[str, Any], ids: CallIds) -> ModelInput:
        """The neutral `model_input` of a request; raises `BlackboxUnsupportedError` for what cannot be
        recorded and replayed faithfully (leaving `ids` as it was)."""
        raise NotImplementedError

    def normalize_response(self, body: dict[str, Any], ids: CallIds) -> ModelOutput:
        """The neutral `model_output` of an (unstreamed) response body."""
        raise NotImplementedError

    def token_counts(self, body: dict[str, Any]) -> Tokens | None:
        """The call's token counts, from the same body as `normalize_response` (whose neutral output never holds
        them: they go beside the payload, unhashed), or None when the body reports none."""
        raise NotImplementedError

    def synthesize_response(self, output: ModelOutput, *, step_index: int, timestamp_ms: int,
                            model: str | None) -> dict[str, Any]:
        """The response body an SDK accepts for a recorded output (replay, scripted forks)."""
        raise NotImplementedError

    def call_slots(self, body: Any) -> Slots:
        """Where a response body holds each tool call's id, in call order (`providers.origins`): none here."""
        return no_slots(body)

    def origin(self, body: dict[str, Any]) -> Origin | None:
        """Who answered: this API, the model the response names, its id and its calls' ids (`origins`)."""
        return origin_of(self.name, body.get(self.response_model_field), body.get(self.response_id_field),
                         [holder.get(key) for holder, key in self.call_slots(body)])

    def with_origin(self, body: dict[str, Any], origin: Origin, calls: int) -> dict[str, Any]:
        """A synthesized response (of an output with `calls` calls) given the recorded answer's model, id and
        tool-call ids where the origin kept them; the rest stays Blackbox's (`call-N`, `blackbox-replay-N`)."""
        if origin.model is not None:
            body[self.response_model_field] = origin.model
        response_id = origin.response_id()
        if response_id is not None:
            body[self.response_id_field] = response_id
        slots, ids = self.call_slots(body), origin.call_ids()
        if len(slots) == calls == len(ids):
            for (holder, key), provider_id in zip(slots, ids, strict=True):
                if provider_id is not None:
                    holder[key] = provider_id
        return body

    def note_answer(self, request: dict[str, Any], response: dict[str, Any], ids: CallIds, *, live: bool) -> None:
        """Remember what an answered call leaves on the server for the session's later calls (Anthropic's message
        threads); `live` when a real server sent `response`.  Nothing, for an API whose requests hold it all."""

    def outgoing(self, request: dict[str, Any], ids: CallIds) -> dict[str, Any] | None:
        """The body to send in place of `request` (as `read_request` gave it) when it names server state no live
        server of this session issued (a fork's replayed prefix): the whole conversation instead; None to send
        the request as it is."""
        return None

    def note_replayed(self, body: dict[str, Any], ids: CallIds) -> None:
        """Teach `ids` what a replayed (or scripted) response body names beyond the `call-N` ids the replayer
        binds: nothing, for an API whose calls always carry their ids back (Gemini's may come back without)."""

    def error_body(self, message: str) -> dict[str, Any]:
        """The API's HTTP 400 error body (the SDKs raise it without retrying)."""
        raise NotImplementedError

    def build_request(self, model_input: Mapping[str, Any]) -> dict[str, Any]:
        """The request body for a neutral `model_input` (the what-if continues a conversation with it)."""
        raise NotImplementedError

    def continue_request(self, model_input: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """`build_request`, told the conversation's outputs so far (oldest first): an API that needs back what a
        `model_input` leaves out (Gemini's thought signatures) takes it from them."""
        return self.build_request(model_input)

    def endpoint(self, base_url: str, model: str) -> str:
        """The URL a what-if sends `model`'s request to, below `base_url`."""
        return f"{base_url.rstrip('/')}{self.suffix}"

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers that carry `key` (and any version header the API requires)."""
        return {"authorization": f"Bearer {key}"}

    def __repr__(self) -> str:
        return f"<provider {self.name}>"
