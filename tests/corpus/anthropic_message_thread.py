"""The Anthropic SDK's message thread (`client.beta.messages.thread(...)`): a conversation the server keeps
between turns.  The thread runs its tools until the model is done, then the user asks a follow-up on the same
thread, which sends only the new message and continues from the last reply's id.

The thread's state (the server's history, the reply ids it continues from) is what the cassette must make
whole: every recorded request holds the conversation the model had, replay hands back the recorded reply ids
so the SDK continues the same thread, and a live fork restates the history to a server that never saw it.
"""

from anthropic import Anthropic, beta_tool
from pydantic import BaseModel

import blackbox

CORPUS = {"needs": ["anthropic"]}


class Order(BaseModel):
    order_id: str
    status: str
    days_late: int


bb = blackbox.session()
client = Anthropic(http_client=bb.http_client())


@beta_tool
@bb.tool("lookup_order")
def lookup_order(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: The order number, e.g. A-1001
    """
    return Order(order_id=order_id, status="shipped", days_late=2).model_dump_json()


thread = client.beta.messages.thread(
    model="claude-sonnet-4-6",
    max_tokens=1024,
    system="You are a support agent. Be brief.",
    tools=[lookup_order],
    messages=[{"role": "user", "content": "Where is my order A-1001?"}],
)
first = thread.tool_runner().until_done()
follow_up = thread.send({"role": "user", "content": "Can you summarise that in one line?"})
answer = "".join(block.text for block in follow_up.content if block.type == "text")
print(answer)
bb.finish(result=answer)
