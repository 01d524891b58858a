"""What the money skill's parts use of one another (./__init__.py combines them into
`MoneySkill`): declared here for the type checker only, as ../common.py's `SkillBase` does for
the skills, so each part reads on its own and none imports another's class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from supportdesk.models.offline.skills.common import SkillBase


# The request each account action carries out (a refund answers a duplicate too).
INTENT_OF = {
    "refund_charge": "refund", "cancel_subscription": "cancel", "change_plan": "plan",
    "update_payment_method": "payment", "issue_credit": "credit",
}

ANYTHING_ELSE = "Is there anything else I can help with?"
# Said to a hedge before the offer is put again (offers.py `_asked_plainly`, declines.py `_held_again`).
NOT_YET = "I'll only do it if you're sure, and nothing has changed yet."
TAKE_YOUR_TIME = "Of course, take your time: nothing has changed yet."
# What stays as it was after a no, by the action declined.
STAYS = {
    "refund": "nothing has been refunded",
    "cancel": "your subscription stays as it is",
    "plan": "your plan stays as it is",
    "credit": "no credit has been added",
}


class MoneyBase(SkillBase):
    """The base of each part of the money skill (set up, like every skill, by `Specialist`)."""

    if TYPE_CHECKING:
        # Defined in the module the comment names.
        def _asked(self, text: str) -> set[str]: ...  # intents
        def _asked_plainly(self, offer: Any, lead: str = NOT_YET, question: str = ""): ...  # offers
        def _put_again(self, offer: Any) -> str: ...  # offers
        def _offer_batch(self, each: list[dict[str, Any]], options: list[str], done: str = ""): ...  # offers
        def _batch_rest(self) -> tuple[list[dict[str, Any]], list[str]]: ...  # offers
        def _charges(self, customer_id: str) -> list[dict[str, Any]] | None: ...  # reads
        def _charge_label(self, charge_id: str) -> str: ...  # reads
        def _charge_named(
            self, text: str, charges: list[dict[str, Any]], months: list[int], duplicate: bool
        ) -> dict[str, Any] | list[dict[str, Any]] | None: ...  # reads
        def _last_named_charges(self, charges: list[dict[str, Any]], text: str) -> list[dict[str, Any]] | None: ...  # reads
        def _charges_summary(self, charges: list[dict[str, Any]], lead: str = "Your recent charges: ") -> str: ...  # reads
        def _which_charge(self, charges: list[dict[str, Any]]): ...  # reads
        def _reads_today_first(self, customer_id: str, text: str): ...  # reads
        def _refunded(self, charge_id: str | None) -> bool: ...  # refunds
        def _refund_args(self, charge: dict[str, Any]) -> dict[str, Any]: ...  # refunds
        def _refund_passed_up_to(self, args: dict[str, Any]) -> str: ...  # refunds
        def _offer_refund(
            self, found: str, question: str, args: dict[str, Any], options: list[str], asked_for: bool = True, **context: Any
        ): ...  # refunds
        def _credit(self, customer_id: str, text: str, confirmed: bool = False): ...  # credit
        def _price_list(self) -> tuple[Any, list[dict[str, Any]]]: ...  # ../account.py
