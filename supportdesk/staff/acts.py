"""The staff actions on a session's log: take over, release, reply, set the state, tag, a note,
a manual handoff, a context edit, deciding an approval, withdrawing an offer.

Each appends its items under the session's turn lease, so it lands between turns, never inside
one; `by` says which person did it and from where (the audit); None: the chosen name or the OS
user, in the TUI. They are the runner's own acts (they use its lease, its append and its reading
of who holds the conversation), kept here beside the rest of staff; `Runner.takeover` ... call
them, as do the command line and the web API (`staff/requests.py`) and the TUI.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from supportdesk.folds import desk_state
from supportdesk.engine.errors import TurnError
from supportdesk.engine.events import Appended, Event
from supportdesk.items import (
    ContextSet,
    Handoff,
    Item,
    Message,
    Notice,
    NoticeKind,
    Priority,
    Release,
    SettableState,
    StaffReply,
    StateChange,
    TagChange,
    Takeover,
    ToolCall,
)
from supportdesk.staff.audit import PART_OF_ACT
from supportdesk.staff.people import Actor, default_actor

if TYPE_CHECKING:
    from supportdesk.engine.runner import Runner
    from supportdesk.engine.turn_reads import TurnReads


# --- who holds it, and whether it is resolved -------------------------------------------------


async def held_by(runner: Runner, session_id: str) -> str | None:
    """The person holding the conversation (a take-over not yet released), or None."""
    taken = await runner.store.kind_seqs(session_id, "takeover")
    if not taken:
        return None
    released = await runner.store.kind_seqs(session_id, "release")
    if released and released[-1] > taken[-1]:
        return None
    item = await runner.store.item(session_id, taken[-1])
    return item.person if isinstance(item, Takeover) else None


async def resolved(runner: Runner, session_id: str) -> bool:
    """The conversation's state is `resolved` (desk_state's fold): staff resolved it and
    nothing since reopened it (the customer writing, a take-over, another state)."""
    changes = await runner.store.kind_seqs(session_id, "state_change")
    if not changes:
        return False
    last = await runner.store.item(session_id, changes[-1])
    if not isinstance(last, StateChange) or last.state != "resolved":
        return False
    after = await runner.store.range(session_id, last.seq + 1, await runner.store.last_seq(session_id))
    return desk_state.fold(after, desk_state.ConversationState(state="resolved")).state == "resolved"


# --- the acts ---------------------------------------------------------------------------------


async def takeover(runner: Runner, session_id: str, by: Actor | None = None, reason: str = "") -> Item:
    """A person takes the conversation: the agents stay silent until it is released."""
    by = by or default_actor()
    async with runner.store.turn(session_id):
        holder = await held_by(runner, session_id)
        if holder is not None:
            raise TurnError(f"{holder} already holds this conversation")
        active = await runner._active_agent(session_id)
        items: list[Item] = [
            Takeover(person=by.person, origin=by.origin, reason=reason, agent=active, meta=by.act_meta())
        ]
        state = await runner._open_offer(session_id)
        if state is not None:  # a person now answers the customer: the agent's offer lapses
            items.append(replace(runner._decline(state.offer, "expired", "staff", active), meta={PART_OF_ACT: True}))
        item, *_ = await runner._append(session_id, items)
    return item


async def release(
    runner: Runner, session_id: str, to_agent: str | None = None, summary: str = "", by: Actor | None = None
) -> list[Item]:
    """Give the conversation back: to `to_agent`, default the agent that held it, with a
    summary that agent reads. The agent answers the customer's next message."""
    by = by or default_actor()
    if to_agent is not None and to_agent not in runner.config.agents:
        raise TurnError(f"no agent named {to_agent!r}; agents: {', '.join(runner.config.agents)}")
    async with runner.store.turn(session_id):
        if await held_by(runner, session_id) is None:
            raise TurnError("nobody has taken this conversation over; there is nothing to release")
        active = await runner._active_agent(session_id)
        target = to_agent or active
        items: list[Item] = [
            Release(person=by.person, origin=by.origin, to_agent=target, summary=summary, agent=active, meta=by.act_meta())
        ]
        if target != active:
            # The active agent is the log's fold over handoffs: the release moves it too.
            items.append(
                Handoff(from_agent=active, to_agent=target, reason=f"released by {by.person}",
                        handoff_kind="manual", agent=active, meta={PART_OF_ACT: True})
            )
        return await runner._append(session_id, items)


async def staff_reply(runner: Runner, session_id: str, text: str, by: Actor | None = None) -> Item:
    """What a person writes to the customer (channels deliver it like an agent's reply)."""
    by = by or default_actor()
    if not text.strip():
        raise TurnError("the reply is empty")
    async with runner.store.turn(session_id):
        if await resolved(runner, session_id):
            raise TurnError("this conversation is resolved; reopen it (state ai or needs_staff) to reply")
        active = await runner._active_agent(session_id)
        [item] = await runner._append(
            session_id, [StaffReply(person=by.person, origin=by.origin, text=text, agent=active, meta=by.act_meta())]
        )
    return item


async def set_state(
    runner: Runner,
    session_id: str,
    state: SettableState,
    *,
    until: datetime | None = None,
    reason: str = "",
    by: Actor | None = None,
) -> Item:
    by = by or default_actor()
    if state == "snoozed" and until is None:
        raise TurnError("a snooze needs a time it ends (--until)")
    if state != "snoozed" and until is not None:
        raise TurnError("only a snooze takes --until")
    async with runner.store.turn(session_id):
        holder = await held_by(runner, session_id) if state == "ai" else None
        if holder is not None:
            raise TurnError(f"{holder} holds this conversation; release it to give it to the agents")
        active = await runner._active_agent(session_id)
        item = StateChange(
            person=by.person, origin=by.origin, state=state, until=until, reason=reason, agent=active, meta=by.act_meta()
        )
        [stored] = await runner._append(session_id, [item])
    return stored


async def tag(
    runner: Runner,
    session_id: str,
    add: list[str] = [],  # noqa: B006 - never mutated
    remove: list[str] = [],  # noqa: B006
    priority: Priority | None = None,
    by: Actor | None = None,
) -> Item:
    by = by or default_actor()
    added = list(dict.fromkeys(t.strip() for t in add if t.strip()))
    removed = list(dict.fromkeys(t.strip() for t in remove if t.strip()))
    if not added and not removed and priority is None:
        raise TurnError("give a tag to add or remove, or a priority")
    async with runner.store.turn(session_id):
        active = await runner._active_agent(session_id)
        item = TagChange(
            person=by.person, origin=by.origin, added=added, removed=removed, priority=priority, agent=active,
            meta=by.act_meta(),
        )
        [stored] = await runner._append(session_id, [item])
    return stored


async def staff_note(runner: Runner, session_id: str, text: str, by: Actor | None = None) -> Item:
    by = by or default_actor()
    async with runner.store.turn(session_id):
        active = await runner._active_agent(session_id)
        [item] = await runner._append(session_id, [Message(role="staff", text=text, agent=active, meta=by.meta())])
    return item


async def force_handoff(
    runner: Runner, session_id: str, to_agent: str, reason: str = "staff decision", by: Actor | None = None
) -> Item:
    by = by or default_actor()
    if to_agent not in runner.config.agents:
        raise TurnError(f"no agent named {to_agent!r}; agents: {', '.join(runner.config.agents)}")
    async with runner.store.turn(session_id):
        active = await runner._active_agent(session_id)
        if to_agent == active:
            raise TurnError(f"{to_agent} already holds the conversation")
        [item] = await runner._append(
            session_id,
            [Handoff(from_agent=active, to_agent=to_agent, reason=reason, handoff_kind="manual", agent=active,
                     meta=by.meta())],
        )
    return item


async def set_context(
    runner: Runner, session_id: str, key: str, value: Any, writer: str = "staff", by: Actor | None = None
) -> Item:
    by = by or default_actor()
    async with runner.store.turn(session_id):
        active = await runner._active_agent(session_id)
        [item] = await runner._append(
            session_id, [ContextSet(key=key, value=value, writer=writer, agent=active, meta=by.meta())]
        )
    return item


async def pending_approvals(runner: Runner, session_id: str) -> list[Notice]:
    return desk_state.undecided_approvals(await runner.store.of_kind(session_id, "notice"))


async def decide_approval(
    runner: Runner, session_id: str, approval_id: str, granted: bool, by: Actor | None = None
) -> AsyncGenerator[Event, None]:
    """Staff grant or deny a pending approval; the agent then tells the customer (unless a
    person holds the conversation: then they do)."""
    actor = by or default_actor()
    async with aclosing(runner._one_at_a_time(session_id, lambda reads: _decide(runner, session_id, approval_id, granted, actor, reads))) as turn:
        async for event in turn:
            yield event


async def _decide(
    runner: Runner, session_id: str, approval_id: str, granted: bool, by: Actor, reads: TurnReads
) -> AsyncGenerator[Event, None]:
    pending = {n.data["approval_id"]: n for n in await pending_approvals(runner, session_id)}
    request = pending.get(approval_id)
    if request is None:
        raise TurnError(f"no pending approval {approval_id!r}")
    active = await runner._active_agent(session_id)
    agent = runner.config.agents.get(request.agent) or runner.config.agents[active]
    tool = request.data["tool"]
    kind: NoticeKind = "approval_granted" if granted else "approval_denied"
    verdict = "granted" if granted else "denied"
    items: list[Item] = [
        Notice(
            notice_kind=kind,
            text=f"Staff {verdict} {tool}.",  # the approval id stays in data: staff never need it
            data={"approval_id": approval_id, "tool": tool},
            agent=active,
            meta=by.meta(),
        )
    ]
    if granted and "handoff" in request.data:
        # A hook held this handoff for staff: granted, it happens now.
        items.append(
            Handoff(
                from_agent=agent.name,
                to_agent=request.data["handoff"],
                reason=request.data.get("reason", ""),
                handoff_kind=request.data.get("handoff_kind", "route"),
                agent=agent.name,
            )
        )
    elif granted:
        context = {k: e.value for k, e in (await runner.store.context_at(session_id)).items()}
        call_id = f"{approval_id}-approved"
        output = await runner._invoke(
            session_id,
            agent,
            call_id,
            tool,
            request.data.get("arguments") or {},
            context,
            approved=True,
            key=f"{session_id}/approval/{approval_id}",
        )
        items += [
            ToolCall(call_id=call_id, name=tool, arguments=request.data.get("arguments") or {}, agent=agent.name),
            output.result(call_id, tool, agent.name),
            *runner._context_items(output.context, agent.name),
        ]
    for item in await runner._append(session_id, items):
        reads.add(item)
        yield Appended(item)
    async for event in runner._turn(session_id, reads=reads):
        yield event


async def withdraw_offer(runner: Runner, session_id: str, by: Actor | None = None) -> Item:
    """Staff withdraw the open offer: it can no longer be confirmed."""
    by = by or default_actor()
    async with runner.store.turn(session_id):
        state = await runner._open_offer(session_id)
        if state is None:
            raise TurnError("no offer is open in this conversation")
        active = await runner._active_agent(session_id)
        decline = replace(runner._decline(state.offer, "withdrawn", "staff", active), meta=by.meta())
        [item] = await runner._append(session_id, [decline])
    return item
