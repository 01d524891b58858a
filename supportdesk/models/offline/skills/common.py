"""What the skills share: a few replies, dates as customers read them, and the base that names
what each skill mixin may use of the others (the specialist in ../specialist.py has them all)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING, Any

from supportdesk.config import AgentConfig
from supportdesk.models.offline.router import Router
from supportdesk.models.offline.view import ToolEvent, View

if TYPE_CHECKING:
    from supportdesk.models.offline.specialist import Step

# How an article given as the answer to a question ends; a "yes" to it settles the question.
ANSWERS_QUESTION = "Does that answer your question?"
# How a price quoted to a customer who could change plans ends; a yes to it asks for the change.
PLAN_CHANGE_ASKED = "Would you like to change your plan?"
CARD_NUMBER_WARNING = (
    "Please don't send full card numbers in chat. Tell me the card brand and its last four digits "
    "(for example \"visa ending 1234\"), and add the card itself under Settings > Billing."
)


def nice_date(iso: str) -> str:
    try:
        d = date.fromisoformat(iso)
    except ValueError:
        return iso
    return f"{d.strftime('%B')} {d.day}, {d.year}"


class SkillBase:
    """What every skill reads and answers through (set by `Specialist.__init__`)."""

    view: View
    router: Router | None
    me: AgentConfig
    skills: frozenset[str]
    step: Step

    def handed_matter(self) -> str | None:
        """The matter triage just handed this agent, when the customer's latest message does not
        say it: a second matter that waited its turn ("... and also what was the charge in
        february?") is handed over after the first is settled, on a message about that first one
        ("thanks, that fixed it"). The skill answers what the waiting text asked, read again as
        the customer wrote it, not the thanks (issue 38: the waiting month was lost, and every
        charge on the account was listed). None when the latest message says the matter itself
        (routed as it came, or one part of it) or no handoff brought the conversation here."""
        v = self.view
        if not any(h.to_agent == self.me.name and h.handoff_kind == "route" for h in v.turn_handoffs):
            return None
        issue = v.context.get("issue")
        if not isinstance(issue, str) or not issue.strip():
            return None
        said = " ".join(v.latest.lower().split())
        return None if " ".join(issue.lower().split()) in said else issue

    if TYPE_CHECKING:
        # What one skill calls of another (or of the specialist's shared part); defined where the
        # comment says, declared here for the type checker only.
        def topic_texts(self) -> list[str]: ...  # core
        def _covered(self, ground: str) -> bool: ...  # core
        def ground_owner(self, ground: str) -> str | None: ...  # core
        def _outside_my_scope(self, text: str) -> bool: ...  # core
        def _strays(self, text: str) -> bool: ...  # core
        def _hand_back(self, text: str, for_agent: str | None = None): ...  # core
        def return_target(self) -> str | None: ...  # core
        def _ask_human(self, why: str, context: dict[str, Any]): ...  # core
        def escalation_target(self, tool: str) -> str | None: ...  # senior
        def _escalated_refund(self): ...  # senior
        def _escalate_refund(self, target: str, args: dict[str, Any], why: str, found: str | None = None): ...  # senior
        def _refund_call(self, args: dict[str, Any]): ...  # money
        def _duplicate_question(self, charge_id: str, amount: float) -> str: ...  # money
        def _customer_id(self) -> str | None: ...  # account
        def _account_known_before_this_turn(self) -> bool: ...  # account
        def _customer_record(self, customer_id: str) -> dict[str, Any] | None: ...  # account
        def _read_account(self, customer_id: str) -> tuple[Any, dict[str, Any]]: ...  # account
        def _identify(self, intents: set[str]) -> Any: ...  # account
        def _cancel(self, customer_id: str, explicit: bool): ...  # account
        def _plan_change(self, customer_id: str, text: str, asked: set[str]): ...  # account
        @staticmethod
        def _change_priced(plans: list[dict[str, Any]], plan: str, period: str, *, compared: bool = True) -> str: ...  # account
        def _next_payment(self, customer_id: str): ...  # account
        def _next_due(self, record: dict[str, Any]) -> date: ...  # account
        def _my_plan(self, customer_id: str, with_price: bool = False, text: str = ""): ...  # account
        def _card_on_file(self, customer_id: str): ...  # account
        def _pricing(self, text: str): ...  # account
        def _about_action(self, intents: set[str], text: str, plan_answer: Callable[[str], str], *, priced: bool = False): ...  # account
        def _payment_method(self, customer_id: str, text: str): ...  # account
        def _invoices_answer(self, event: ToolEvent | None, text: str): ...  # account
        def _bug_summary(self, issue: str, text: str, searched: list[ToolEvent]) -> str: ...  # technical


def with_article(noun: str) -> str:
    """ "a privacy request", "an ownership transfer"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
