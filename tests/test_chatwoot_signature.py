"""Known answers for Chatwoot's webhook signature, not recomputed with the code under test.

Chatwoot's API reference (the webhook object's `secret`): signed deliveries carry
`X-Chatwoot-Timestamp` and `X-Chatwoot-Signature`, the signature being `sha256=` and the hex
HMAC-SHA256, keyed by the secret, of `{timestamp}.{raw_request_body}`. The hex digests below were
computed once outside this code base, with
`printf '%s' '<timestamp>.<body>' | openssl dgst -sha256 -hmac '<secret>'`.
"""

from __future__ import annotations

import httpx

from supportdesk.channels.chatwoot import signature
from tests.test_chatwoot import PATH_SECRET, SIGNING_SECRET, bot  # noqa: F401 (bot: the fixture)

NOW = "1800000000"
TYPING = b'{"event":"conversation_typing_on","id":7}'
TYPING_SIGNED = "sha256=b1bff0ee00191f2be341e68730ef0930843b1bb6f9802e0afb0ad83a73ac6a29"
MESSAGE = b'{"event":"message_created","id":42,"content":"I was charged twice"}'
MESSAGE_SIGNED = "sha256=b0e27e711efae016fac0d9cf8a09240295bdd97d9c06de44dc2f851d28888075"


def test_the_signature_is_the_documented_hmac_of_timestamp_dot_body():
    assert SIGNING_SECRET == "signing-secret-xyz"  # the key the digests above were computed with
    assert signature(SIGNING_SECRET, NOW, TYPING) == TYPING_SIGNED
    assert signature(SIGNING_SECRET, NOW, MESSAGE) == MESSAGE_SIGNED


async def test_a_delivery_signed_as_chatwoot_signs_is_accepted_and_its_signature_binds_the_timestamp(bot):  # noqa: F811
    _, _, client = await bot(signed=True, clock=lambda: 1_800_000_000.0)

    async def post(timestamp: str, sig: str) -> httpx.Response:
        return await client.post(
            f"/channels/chatwoot/webhook/{PATH_SECRET}",
            content=TYPING,
            headers={"X-Chatwoot-Timestamp": timestamp, "X-Chatwoot-Signature": sig},
        )

    accepted = await post(NOW, TYPING_SIGNED)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["status"] == "ignored"  # past the signature: a typing event is not for the bot
    # The same body and signature under another fresh timestamp (a captured delivery replayed): refused.
    replayed = await post("1800000010", TYPING_SIGNED)
    assert replayed.status_code == 401 and "does not match" in replayed.json()["error"]
